// Sign-in (POST /v1/auth), its renewal (POST /v1/auth/refresh) and the caller's
// identity (GET /v1/me).
import type { RouteModule } from '../app.js';
import { AuthAnswer, AuthBody, User } from '../../api/hosted/auth.js';
import { authenticateUser } from '../auth/credentials.js';
import { unauthorized } from '../errors.js';
import { findUserById, publicUser, signIn } from '../services/accounts.js';

const routes: RouteModule = (app, ctx) => {
  app.post('/v1/auth', { schema: { body: AuthBody, response: { 200: AuthAnswer } } }, async (req) => {
    const user = await signIn(ctx.db, req.body.email, req.body.password);
    // One message for an unknown e-mail and a wrong password: no user enumeration.
    if (!user) throw unauthorized('wrong e-mail or password');
    return { token: await ctx.tokens.signUser(user.id), user: publicUser(user) };
  });

  // A user token still valid (or expired less than a week ago: tokens.ts) buys a fresh
  // one with a full lifetime, so that a client that stays running (the agent, the
  // desktop app) stays signed in without keeping the password, outages included.
  // API keys do not expire this way and need no renewal.
  app.post('/v1/auth/refresh', { schema: { response: { 200: AuthAnswer } } }, async (req) => {
    const token = req.headers['x-user-token'];
    if (typeof token !== 'string' || token === '') throw unauthorized('X-User-Token required');
    const claims = await ctx.tokens.verifyUserForRefresh(token);
    const user = claims && (await findUserById(ctx.db, claims.userId));
    if (!user) throw unauthorized('invalid or expired user token');
    return { token: await ctx.tokens.signUser(user.id), user: publicUser(user) };
  });

  app.get('/v1/me', { schema: { response: { 200: User } } }, async (req) => {
    const who = await authenticateUser(ctx, req);
    const user = await findUserById(ctx.db, who.userId);
    if (!user) throw unauthorized();
    return publicUser(user);
  });
};
export default routes;
