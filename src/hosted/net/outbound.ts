// The outbound-request guard: everything the service fetches or sends on a
// tenant's behalf (webhooks, the buckets of cloud connections) connects through
// it. A name is resolved once, every address it has is checked against the
// policy (addresses.ts), and the socket connects to an address of that same
// answer: no second lookup that DNS rebinding could answer differently. A
// literal address (which sockets never look up) is checked the same way. TLS
// still verifies the certificate against the name (SNI), not the address.
// Redirects are not followed by the clients that use it (undici's request, the
// AWS SDK). Operator-chosen addresses (our store, --cloud-aws-endpoint, SMTP,
// clamd, PostgreSQL) do not go through it.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { buildConnector } from 'undici';
import { badRequest } from '../errors.js';
import { ipBytes, TargetPolicy, type AddressKind, type PrivateTargets } from './addresses.js';

/** What a tenant reads when the guard refused an address: the same words for every kind, and for names and literals. */
export const REFUSED_TEXT = 'refused: private address';

/** A connection the guard refused; `host`, `address` and `kind` are for the operator's log, the message for the tenant. */
export class PrivateTargetError extends Error {
  readonly code = 'ERR_PRIVATE_TARGET';

  constructor(
    readonly host: string,
    readonly address: string,
    readonly kind: AddressKind,
  ) {
    super(REFUSED_TEXT);
    this.name = 'PrivateTargetError';
  }
}

/** Every address of a name; dns.lookup (the system's resolver, /etc/hosts included) unless a test gives its own. */
export type Resolver = (host: string) => Promise<dns.LookupAddress[]>;

const systemResolver: Resolver = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

const bare = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

export class OutboundGuard {
  readonly policy: TargetPolicy;

  constructor(
    allowed: PrivateTargets,
    private readonly resolve: Resolver = systemResolver,
  ) {
    this.policy = new TargetPolicy(allowed);
  }

  /** The refusal of `host` when it is a literal address the policy refuses; undefined for names and allowed addresses. */
  refuseLiteral(host: string): PrivateTargetError | undefined {
    const ip = bare(host);
    if (!ipBytes(ip)) return undefined;
    const kind = this.policy.refusal(ip);
    return kind ? new PrivateTargetError(host, ip, kind) : undefined;
  }

  /** Every address of `host`, all checked: one refused address refuses the name (the socket might pick any of them). */
  async resolveChecked(host: string): Promise<dns.LookupAddress[]> {
    const ip = bare(host);
    const family = ipBytes(ip)?.length === 4 ? 4 : 6;
    const found = ipBytes(ip) ? [{ address: ip, family }] : await this.resolve(host);
    for (const a of found) {
      const kind = this.policy.refusal(a.address);
      if (kind) throw new PrivateTargetError(host, a.address, kind);
    }
    return found;
  }

  /**
   * A `lookup` for net.connect and tls.connect: the one resolution the socket
   * makes, checked. Answers one address or all (Node asks for all when it tries
   * IPv6 and IPv4 in turn), of the family asked for.
   */
  readonly lookup: net.LookupFunction = (hostname, options, callback) => {
    this.resolveChecked(hostname).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        if (wanted.length === 0) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }), '', 0);
        } else if (options.all) callback(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };

  /** An undici connector (an Agent's `connect`) that reaches only addresses the policy allows. */
  connector(options: buildConnector.BuildOptions = {}): buildConnector.connector {
    const connect = buildConnector({ ...options, lookup: this.lookup } as buildConnector.BuildOptions);
    return (opts, callback) => {
      const refused = this.refuseLiteral(opts.hostname);
      if (refused) queueMicrotask(() => callback(refused, null));
      else connect(opts, callback);
    };
  }

  /** An http and an https agent (the AWS SDK's httpAgent / httpsAgent) that reach only addresses the policy allows. */
  agents(options: https.AgentOptions = {}): { httpAgent: http.Agent; httpsAgent: https.Agent } {
    const opts = { keepAlive: true, maxSockets: 50, ...options, lookup: this.lookup };
    const httpAgent = new http.Agent(opts);
    const httpsAgent = new https.Agent(opts);
    for (const agent of [httpAgent, httpsAgent]) this.guardLiterals(agent);
    return { httpAgent, httpsAgent };
  }

  /** A literal address never reaches `lookup`: the agent's connections to one are checked before they are made. */
  private guardLiterals(agent: http.Agent): void {
    type Create = (o: http.ClientRequestArgs, cb?: (err: Error | null, stream: Duplex) => void) => Duplex | null | undefined;
    const internals = agent as unknown as { createConnection: Create };
    const create = internals.createConnection.bind(agent);
    internals.createConnection = (o, cb) => {
      const refused = this.refuseLiteral(o.host ?? o.hostname ?? '');
      if (!refused) return create(o, cb);
      process.nextTick(() => cb?.(refused, undefined as unknown as Duplex));
      return undefined;
    };
  }

  /**
   * The check on write: a URL whose host is a literal address the policy
   * refuses answers 400 private_target. The WHATWG parser has normalized odd
   * spellings (2130706433, 0x7f.1, [::ffff:7f00:1]) by now. Names are checked
   * when used: what they resolve to can change.
   */
  checkUrl(url: URL, field: string): void {
    const refused = this.refuseLiteral(url.hostname);
    if (refused) {
      throw badRequest(
        `${field} is a ${refused.kind} address (${refused.address}); the service connects only to public addresses unless its operator allows others (--allow-private-targets)`,
        'private_target',
      );
    }
  }
}
