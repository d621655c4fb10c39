// GET /v1/teams and GET /v1/teams/{team_id}/members.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, ownerActor, type Actor } from '../../helpers/auth.js';
import { addMember, createTeam } from '../../../src/hosted/services/accounts.js';

let svc: TestService;
let owner: Actor;
let member: Actor;
let secondTeamId: string;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  member = await newActor(svc, 'teams-member@example.com', { teamId: owner.teamId, role: 'member' });
  // The owner also belongs to a second Team, as an admin.
  secondTeamId = (await createTeam(svc.ctx.db, 'Second Team', 'second')).id;
  await addMember(svc.ctx.db, secondTeamId, owner.userId, 'admin');
});
afterAll(() => svc?.close());

describe('GET /v1/teams', () => {
  test('a user token lists every Team of the user, with booleans as booleans', async () => {
    const r = await call(svc.url, 'GET', '/v1/teams', { headers: { 'x-user-token': owner.userToken } });
    expect(r.status).toBe(200);
    expect(r.body.map((t: { id: string }) => t.id).sort()).toEqual([owner.teamId, secondTeamId].sort());
    const second = r.body.find((t: { id: string }) => t.id === secondTeamId);
    expect(second).toEqual({
      id: secondTeamId,
      name: 'Second Team',
      subdomain: 'second',
      max_email_recipients: 50,
      custom_expiry_enabled: true,
      custom_expiry_default: 7,
      download_limit_enabled: false,
      download_limit_default: 0,
    });
  });

  test('an API key lists only its own Team', async () => {
    const r = await call(svc.url, 'GET', '/v1/teams', { headers: owner.h });
    expect(r.status).toBe(200);
    expect(r.body.map((t: { id: string }) => t.id)).toEqual([owner.teamId]);
  });

  test('a member sees the Team too', async () => {
    const r = await call(svc.url, 'GET', '/v1/teams', { headers: member.h });
    expect(r.body.map((t: { id: string }) => t.id)).toEqual([owner.teamId]);
  });

  test('without credentials it answers 401', async () => {
    expect((await call(svc.url, 'GET', '/v1/teams')).status).toBe(401);
  });
});

describe('GET /v1/teams/{team_id}/members', () => {
  test('lists the memberships with their roles and users', async () => {
    const r = await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/members`, { headers: member.h });
    expect(r.status).toBe(200);
    const byEmail = Object.fromEntries(r.body.map((m: { email: string }) => [m.email, m]));
    expect(byEmail[svc.owner.email]).toMatchObject({ user_id: owner.userId, team_id: owner.teamId, policy_key: 'owner', approved: true, teamspaces: [] });
    expect(byEmail['teams-member@example.com']).toEqual({
      id: expect.stringMatching(/^mem_/),
      name: 'teams-member',
      email: 'teams-member@example.com',
      user_id: member.userId,
      team_id: owner.teamId,
      policy_key: 'member',
      approved: true,
      invitation_accepted: expect.any(String),
      teamspaces: [],
    });
  });

  test('works with a user token', async () => {
    const r = await call(svc.url, 'GET', `/v1/teams/${secondTeamId}/members`, { headers: { 'x-user-token': owner.userToken } });
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(1);
    expect(r.body[0]).toMatchObject({ user_id: owner.userId, policy_key: 'admin' });
  });

  test('a non-member and an unknown Team both answer 404', async () => {
    const outsider = await newActor(svc, 'teams-outsider@example.com');
    const r = await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/members`, { headers: outsider.h });
    expect(r.status).toBe(404);
    const unknown = await call(svc.url, 'GET', '/v1/teams/team_doesnotexist/members', { headers: outsider.h });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 'not_found', message: r.body.message });
  });

  test("an API key of one Team cannot read another of its user's Teams", async () => {
    const r = await call(svc.url, 'GET', `/v1/teams/${secondTeamId}/members`, { headers: owner.h });
    expect(r.status).toBe(404);
  });

  test('without credentials it answers 401', async () => {
    expect((await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/members`)).status).toBe(401);
  });
});
