// A Package's cloud transfers: the manual POST /v1/packages/{id}/transfer, and
// (additions) the Package's transfer records, all of them or one.
import type { RouteModule } from '../app.js';
import { PackageParams } from '../../api/hosted/packages.js';
import { Transfer, TransferBody, TransferList, TransferParams, TransfersQuery } from '../../api/hosted/cloudConnections.js';
import { authorizePackage } from '../auth/credentials.js';
import { getPackageTransfer, listPackageTransfers, startManualTransfer } from '../services/cloudTransfers.js';

const routes: RouteModule = (app, ctx) => {
  app.post('/v1/packages/:package_id/transfer', { schema: { params: PackageParams, body: TransferBody, response: { 201: Transfer } } }, async (req, reply) => {
    const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'full');
    const transfer = await startManualTransfer(ctx, pkg, req.body);
    reply.code(201);
    return transfer;
  });

  app.get('/v1/packages/:package_id/transfers', { schema: { params: PackageParams, querystring: TransfersQuery, response: { 200: TransferList } } }, async (req) => {
    const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'full');
    return { records: await listPackageTransfers(ctx, pkg.id, req.query.limit) };
  });

  app.get('/v1/packages/:package_id/transfers/:transfer_id', { schema: { params: TransferParams, response: { 200: Transfer } } }, async (req) => {
    const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'full');
    return getPackageTransfer(ctx, pkg.id, req.params.transfer_id);
  });
};
export default routes;
