// Disk settings (spec: Disk configuration): GET /settings/disks, GET and PUT
// /settings/disks/{disk_id}, GET /settings/disk_status.
import type { AgentRouteModule } from '../app.js';
import { Disk, DiskChange, DiskIdParams, DiskList, DiskStatusList } from '../../../api/agent/disks.js';

const routes: AgentRouteModule = (app, services) => {
  const { disks } = services;
  app.get('/settings/disks', { schema: { response: { 200: DiskList } } }, async () => disks.list());
  app.get('/settings/disks/:disk_id', { schema: { params: DiskIdParams, response: { 200: Disk } } }, async (req) => disks.get(req.params.disk_id));
  app.put('/settings/disks/:disk_id', { schema: { params: DiskIdParams, body: DiskChange, response: { 200: Disk } } }, async (req) => disks.update(req.params.disk_id, req.body));
  app.get('/settings/disk_status', { schema: { response: { 200: DiskStatusList } } }, async () => disks.status());
};
export default routes;
