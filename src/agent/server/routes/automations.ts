// The Automations group (session required): list, one, its Packages, create and
// update per kind (the spec's paths), delete, enable, disable.
import type { AgentRouteModule } from '../app.js';
import {
  AUTOMATION_TYPES,
  AutomationList,
  AutomationPackageList,
  AutomationParams,
  AutomationRecord,
  CREATE_BODIES,
  UPDATE_BODIES,
  type AutomationFields,
} from '../../../api/agent/automations.js';

const routes: AgentRouteModule = (app, services) => {
  const automations = services.automations;

  app.get('/automations', { schema: { response: { 200: AutomationList } } }, async () => automations.list());

  for (const type of AUTOMATION_TYPES) {
    app.post(`/automations/${type}`, { schema: { body: CREATE_BODIES[type], response: { 201: AutomationRecord } } }, async (req, reply) =>
      reply.code(201).send(await automations.create(type, req.body as AutomationFields)),
    );
    app.put(
      `/automations/${type}/:automation_id`,
      { schema: { params: AutomationParams, body: UPDATE_BODIES[type], response: { 200: AutomationRecord } } },
      async (req) => automations.update(type, (req.params as AutomationParams).automation_id, req.body as AutomationFields),
    );
  }

  app.get('/automations/:automation_id', { schema: { params: AutomationParams, response: { 200: AutomationRecord } } }, async (req) =>
    automations.get(req.params.automation_id),
  );
  app.get('/automations/:automation_id/packages', { schema: { params: AutomationParams, response: { 200: AutomationPackageList } } }, async (req) =>
    automations.packages(req.params.automation_id),
  );
  app.delete('/automations/:automation_id', { schema: { params: AutomationParams, response: { 200: AutomationRecord } } }, async (req) =>
    automations.remove(req.params.automation_id),
  );
  app.post('/automations/:automation_id/enable', { schema: { params: AutomationParams, response: { 200: AutomationRecord } } }, async (req) =>
    automations.setEnabled(req.params.automation_id, true),
  );
  app.post('/automations/:automation_id/disable', { schema: { params: AutomationParams, response: { 200: AutomationRecord } } }, async (req) =>
    automations.setEnabled(req.params.automation_id, false),
  );
};
export default routes;
