// Sign-in (POST /v1/auth) and the caller's identity (GET /v1/me).
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

  app.get('/v1/me', { schema: { response: { 200: User } } }, async (req) => {
    const who = await authenticateUser(ctx, req);
    const user = await findUserById(ctx.db, who.userId);
    if (!user) throw unauthorized();
    return publicUser(user);
  });
};
export default routes;
