// Sign-in (POST /v1/auth), its renewal (POST /v1/auth/refresh), ending every
// session (POST /v1/auth/sign_out_everywhere), the caller's identity (GET /v1/me)
// and a new password (POST /v1/me/password). services/sessions.ts.
import type { RouteModule } from '../app.js';
import { AuthAnswer, AuthBody, PasswordChangeBody, User } from '../../api/hosted/auth.js';
import { authenticateUser, authenticateUserToken } from '../auth/credentials.js';
import { unauthorized } from '../errors.js';
import { findUserById, publicUser } from '../services/accounts.js';
import { changePassword, endSessions, renewSession, signInWithPassword } from '../services/sessions.js';

const routes: RouteModule = (app, ctx) => {
  app.post('/v1/auth', { schema: { body: AuthBody, response: { 200: AuthAnswer } } }, async (req) => {
    const signedIn = await signInWithPassword(ctx, req.body.email, req.body.password);
    // One message for an unknown e-mail and a wrong password: no user enumeration.
    if (!signedIn) throw unauthorized('wrong e-mail or password');
    return signedIn;
  });

  // A user token still valid (or expired less than a week ago: tokens.ts) buys a fresh
  // one with a full lifetime, so that a client that stays running (the agent, the
  // desktop app) stays signed in without keeping the password, outages included, up to
  // --max-session-days after the sign-in. API keys do not expire this way and need no renewal.
  app.post('/v1/auth/refresh', { schema: { response: { 200: AuthAnswer } } }, async (req) => {
    const token = req.headers['x-user-token'];
    if (typeof token !== 'string' || token === '') throw unauthorized('X-User-Token required');
    return renewSession(ctx, token);
  });

  app.post('/v1/auth/sign_out_everywhere', async (req, reply) => {
    const who = await authenticateUserToken(ctx, req, 'sessions are ended with X-User-Token, not X-API-KEY');
    await endSessions(ctx.db, who.userId);
    reply.code(204).send();
  });

  app.get('/v1/me', { schema: { response: { 200: User } } }, async (req) => {
    const who = await authenticateUser(ctx, req);
    const user = await findUserById(ctx.db, who.userId);
    if (!user) throw unauthorized();
    return publicUser(user);
  });

  app.post('/v1/me/password', { schema: { body: PasswordChangeBody, response: { 200: AuthAnswer } } }, async (req) => {
    const who = await authenticateUserToken(ctx, req, 'the password is changed with X-User-Token, not X-API-KEY');
    return changePassword(ctx, who.userId, req.body.current_password, req.body.new_password);
  });
};
export default routes;
