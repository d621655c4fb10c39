// /storage_gateway: register, list, unregister, update (spec: Storage gateway),
// thin routes over the gateways service. No session needed: a gateway
// authenticates to the service with its own id and secret. connections (a Ferry
// addition) makes the connection on the service, and needs the session.
import type { AgentRouteModule } from '../app.js';
import {
  GatewayList,
  GatewayRecord,
  NewConnectionAnswer,
  NewConnectionBody,
  RegisterGatewayBody,
  UnregisterGatewayBody,
  UpdateGatewayBody,
} from '../../../api/agent/storageGateway.js';

const routes: AgentRouteModule = (app, services) => {
  const gateways = services.gateways;

  app.post('/storage_gateway/register', { schema: { body: RegisterGatewayBody, response: { 201: GatewayRecord } } }, async (req, reply) =>
    reply.code(201).send(await gateways.register(req.body)),
  );
  app.get('/storage_gateway/list', { schema: { response: { 200: GatewayList } } }, async () => gateways.list());
  app.post('/storage_gateway/unregister', { schema: { body: UnregisterGatewayBody, response: { 200: GatewayRecord } } }, async (req) =>
    gateways.unregister(req.body.id),
  );
  app.post('/storage_gateway/connections', { schema: { body: NewConnectionBody, response: { 201: NewConnectionAnswer } } }, async (req, reply) =>
    reply.code(201).send(await gateways.newConnection(req.body)),
  );
  app.post('/storage_gateway/update', { schema: { body: UpdateGatewayBody, response: { 200: GatewayRecord } } }, async (req) => gateways.update(req.body));
};
export default routes;
