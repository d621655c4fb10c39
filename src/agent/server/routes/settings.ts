// Settings: GET /settings; PATCH /settings changes some (config.yml) and answers
// whether the agent starts again to apply them.
import type { AgentRouteModule } from '../app.js';
import { AgentSettings, SettingsAnswer, SettingsChange } from '../../../api/agent/settings.js';

const routes: AgentRouteModule = (app, services) => {
  const { settings } = services;
  app.get('/settings', { schema: { response: { 200: AgentSettings } } }, async () => settings.get());
  app.patch('/settings', { schema: { body: SettingsChange, response: { 200: SettingsAnswer } } }, async (req) => settings.update(req.body));
};
export default routes;
