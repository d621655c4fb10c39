// /storage_gateway: register, list, unregister, update (spec: Storage gateway),
// thin routes over the gateways service. No session needed: a gateway
// authenticates to the service with its own id and secret.
import type { AgentRouteModule } from '../app.js';
import { GatewayList, GatewayRecord, RegisterGatewayBody, UnregisterGatewayBody, UpdateGatewayBody } from '../../../api/agent/storageGateway.js';

const routes: AgentRouteModule = (app, services) => {
  const gateways = services.gateways;

  app.post('/storage_gateway/register', { schema: { body: RegisterGatewayBody, response: { 201: GatewayRecord } } }, async (req, reply) =>
    reply.code(201).send(await gateways.register(req.body)),
  );
  app.get('/storage_gateway/list', { schema: { response: { 200: GatewayList } } }, async () => gateways.list());
  app.post('/storage_gateway/unregister', { schema: { body: UnregisterGatewayBody, response: { 200: GatewayRecord } } }, async (req) =>
    gateways.unregister(req.body.id),
  );
  app.post('/storage_gateway/update', { schema: { body: UpdateGatewayBody, response: { 200: GatewayRecord } } }, async (req) => gateways.update(req.body));
};
export default routes;
