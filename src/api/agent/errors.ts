// The agent's error codes: `{code, message}` with an integer code. 262146 is
// fixed by the spec ("session is nil"); the others continue its numbering.
export const AgentErrorCode = {
  internal: 262144,
  badRequest: 262145,
  sessionNil: 262146,
  apiKey: 262147,
  forbidden: 262148,
  notFound: 262149,
  conflict: 262150,
  upstream: 262151,
} as const;
export type AgentErrorCode = (typeof AgentErrorCode)[keyof typeof AgentErrorCode];
