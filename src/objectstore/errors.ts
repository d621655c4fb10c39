// S3 error codes with the HTTP statuses S3 itself uses, so SDKs map them to the
// right exception classes (NoSuchKey, NoSuchUpload, ...).

const STATUS: Record<string, number> = {
  AccessDenied: 403,
  AuthorizationHeaderMalformed: 400,
  AuthorizationQueryParametersError: 400,
  BadDigest: 400,
  BucketNotEmpty: 409,
  EntityTooLarge: 400,
  EntityTooSmall: 400,
  IncompleteBody: 400,
  InternalError: 500,
  InvalidAccessKeyId: 403,
  InvalidArgument: 400,
  InvalidBucketName: 400,
  InvalidDigest: 400,
  InvalidPart: 400,
  InvalidPartNumber: 416,
  InvalidPartOrder: 400,
  InvalidRange: 416,
  InvalidRequest: 400,
  InvalidURI: 400,
  KeyTooLongError: 400,
  MalformedXML: 400,
  MethodNotAllowed: 405,
  MissingContentLength: 411,
  NoSuchBucket: 404,
  NoSuchKey: 404,
  NoSuchUpload: 404,
  NotImplemented: 501,
  PreconditionFailed: 412,
  RequestTimeTooSkewed: 403,
  SignatureDoesNotMatch: 403,
  XAmzContentSHA256Mismatch: 400,
};

const DEFAULT_MESSAGE: Record<string, string> = {
  AccessDenied: 'Access Denied',
  EntityTooSmall: 'Your proposed upload is smaller than the minimum allowed object size.',
  InvalidPart:
    'One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part\'s entity tag.',
  InvalidPartOrder: 'The list of parts was not in ascending order. Parts must be ordered by part number.',
  InvalidRange: 'The requested range is not satisfiable',
  MalformedXML: 'The XML you provided was not well-formed or did not validate against our published schema.',
  NoSuchBucket: 'The specified bucket does not exist',
  NoSuchKey: 'The specified key does not exist.',
  NoSuchUpload:
    'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
  NotImplemented: 'A header or query you provided implies functionality that is not implemented.',
  MethodNotAllowed: 'The specified method is not allowed against this resource.',
  SignatureDoesNotMatch:
    'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
  InvalidAccessKeyId: 'The AWS Access Key Id you provided does not exist in our records.',
  RequestTimeTooSkewed: 'The difference between the request time and the current time is too large.',
  XAmzContentSHA256Mismatch: "The provided 'x-amz-content-sha256' header does not match what was computed.",
  InternalError: 'We encountered an internal error. Please try again.',
};

export class S3Error extends Error {
  readonly status: number;
  /** Extra response headers (e.g. Content-Range on 416). */
  readonly headers: Record<string, string>;

  constructor(
    readonly code: string,
    message?: string,
    headers: Record<string, string> = {},
  ) {
    super(message ?? DEFAULT_MESSAGE[code] ?? code);
    this.name = 'S3Error';
    this.status = STATUS[code] ?? 400;
    this.headers = headers;
  }
}

export function s3err(code: string, message?: string, headers?: Record<string, string>): S3Error {
  return new S3Error(code, message, headers);
}

/** Node fs errors that mean "not there" (the object or upload vanished). */
export function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
