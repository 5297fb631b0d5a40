/**
 * Every route row of section 4 of the interface document (spec/service-interface.md), in document
 * order, as data: the method and path exactly as printed, who sends it (the role the row names, or
 * the least role that is enough where the row names none), the request with only the fields the row
 * (and section 2) names, and the fields the answer must carry. service-interface.test.ts sends them
 * and checks the table against the committed copy of section 4 (section-4.txt).
 */

/**
 * Who sends a row's request: the role the row names, or where it names none the least one that is
 * enough. Workspace roles are members of the contract workspace.
 */
export type Role =
  | 'anonymous'
  /** A signed-up user of the API host (owner of their personal tenant). */
  | 'user'
  /** An admin member (not the owner) of the team tenant. */
  | 'tenant-admin'
  | 'viewer'
  | 'engineer'
  | 'manager'
  /** The review's reviewer (`reviewerEmail`), a viewer of the workspace. */
  | 'reviewer'
  /** The task's owner (`ownerEmail`), a viewer of the workspace. */
  | 'task-owner'
  /** The engineer who created the task. */
  | 'task-creator'
  /** A signed-up user the invitation was sent to (not yet a member). */
  | 'invitee';

/**
 * The shape an answer must have. A string names a type ('string', 'number', 'boolean', 'object',
 * 'array', 'null', 'timestamp' = ISO 8601 string, 'any'), unions with '|'. An object lists fields
 * that must be present (others may be too; a key ending in '?' may be absent). `[shape]` is a
 * non-empty array whose every element has the shape. `{ $or: [...] }` is one of the shapes.
 */
export type Shape = string | Shape[] | { $or: Shape[] } | { [field: string]: Shape };

export interface UploadPart {
  field: string;
  filename: string;
  content: Buffer | string;
  contentType?: string;
}

/** One HTTP request: a JSON body, or a multipart form (fields and files), never both. */
export interface Call {
  host: 'api' | 'collab';
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The concrete URL path (ids filled in). */
  url: string;
  query?: Record<string, string | number | boolean>;
  body?: Record<string, unknown>;
  form?: { fields?: Record<string, string | string[]>; files: UploadPart[] };
  /** Sent by another caller than the row's (a second look at the same route). */
  as?: Role;
  /** Read the answer as a stream of Server-Sent Events (the first chunk only). */
  stream?: boolean;
  /** Statuses that count as accepted (default: any 2xx). */
  status?: number[];
  /** The shape of the JSON body the answer must have. */
  shape?: Shape;
  /** The answer's content type (non-JSON answers: exports, downloads, images). */
  contentType?: RegExp;
}

/** The fixtures the test makes through the HTTP API before the rows run. */
export interface Fixtures {
  api: {
    email: string;
    password: string;
    phone: string;
    /** A phone with a one-time code already sent, and that code. */
    otpPhone: string;
    otpCode: string;
    /** A fresh phone and address for the rows that send a code or link. */
    newPhone: string;
    newEmail: string;
    /** A PNG file with two revisions (processing finished). */
    fileId: string;
    firstRevisionId: string;
    /** `/files/{id}/download` of the PNG and the record's `path`. */
    pngUrl: string;
    pngPath: string;
    /** A temporary access token of the PNG (`GET /files/{id}/access-token`). */
    downloadToken: string;
    styleId: string;
    tenantId: string;
  };
  collab: {
    workspace: string;
    /** Usernames (folder names) of the members. */
    usernames: Record<'owner' | 'manager' | 'engineer' | 'viewer', string>;
    viewerEmail: string;
    part: { id: string };
    /** A part with a draft version, and parts with a version in review (approve, reject). */
    draft: { partId: string; versionId: string };
    toApprove: { partId: string; versionId: string };
    toReject: { partId: string; versionId: string };
    /** A part used as a BOM child (where-used) and one offered as an alternate. */
    childPartId: string;
    childPartNumber: string;
    alternatePartId: string;
    /** An assembly part with a version, for a new BOM. */
    assembly: { partId: string; versionId: string };
    /** A draft BOM with one line (id `itemId`); draft BOMs to submit; BOMs in review. */
    bom: { id: string; itemId: string; revision: string };
    bomToSubmit: string;
    bomToApprove: string;
    bomToReject: string;
    /** Shared files in the engineer's folder. */
    file: { filename: string; path: string; versionId: string };
    /** A file the upload row writes over, with the etag its client last saw. */
    uploadTarget: { filename: string; etag: string };
    fileToDelete: string;
    trashKey: string;
    branched: { filename: string; branch: string };
    toDeleteBranch: { filename: string; branch: string };
    toMerge: { filename: string; branch: string };
    /** An STL to translate, and one translated already (`folder/filename`). */
    model: string;
    translatedModel: string;
    /** Paths locked by the engineer; `unlockable` with its lock id. */
    lockedPath: string;
    unlockable: { path: string; lockId: string };
    forceUnlockPath: string;
    freePath: string;
    conflict: { baseName: string; acceptedPath: string };
    review: { id: string; taskId: string };
    /** A task owned by the viewer (made by the engineer), and one the engineer will delete. */
    taskOwned: string;
    taskToDelete: string;
    templateId: string;
    invitationCode: string;
    signed: { expires: string; sig: string };
  };
}

export interface ContractRow {
  section: string;
  method: string;
  /** Exactly as printed in the document. */
  path: string;
  role: Role;
  /** Why this role, when the row names none and a plain viewer is not enough (or not the one). */
  roleNote?: string;
  calls: (f: Fixtures) => Call[];
  /** A route that still demands more than its row names: the test fails on it, with this reason. */
  knownGap?: string;
}

// ---- shapes named by sections 2, 4 and DECISIONS.md ----

const timestamp = 'timestamp';
/** 2.1 */
const authUser: Shape = {
  id: 'string',
  aud: 'string',
  role: 'string',
  email: 'string',
  email_confirmed_at: 'timestamp|null',
  phone: 'string',
  confirmed_at: 'timestamp|null',
  last_sign_in_at: 'timestamp|null',
  app_metadata: { provider: 'string', providers: ['string'] },
  user_metadata: 'object',
  identities: 'array',
  created_at: timestamp,
  updated_at: timestamp,
};
/** 2.2 */
const session: Shape = {
  access_token: 'string',
  refresh_token: 'string',
  expires_in: 'number',
  token_type: 'string',
};
const authResponse: Shape = { user: authUser, session };
const message: Shape = { message: 'string' };
/** 2.3 */
const imageResult: Shape = {
  status: 'string',
  generated_images: ['string'],
  error_message: 'string|null',
  created_at: timestamp,
};
/** 2.4 */
const fileRecord: Shape = {
  id: 'string',
  name: 'string',
  size: 'number',
  type: 'string',
  mime_type: 'string',
  created_at: timestamp,
  updated_at: timestamp,
  created_by: 'string',
  current_revision_id: 'string',
  revision_count: 'number',
  path: 'string',
  url: 'string',
  preview_url: 'string',
  thumbnail_url: 'string',
  product_id: 'string|null',
  description: 'string',
  tags: 'array',
  metadata: 'object',
  permissions: { view: 'array', edit: 'array', delete: 'array' },
};
/** 2.5 */
const annotation: Shape = {
  id: 'string',
  file_id: 'string',
  user_id: 'string',
  created_at: timestamp,
  text: 'string',
  position: { x: 'number', y: 'number', z: 'number' },
  target: { type: 'string' },
  color: 'string',
  status: 'string',
  replies: 'array',
};
/** DECISIONS 3 */
const style: Shape = {
  id: 'string',
  name: 'string',
  description: 'string|null',
  reference_images: ['string'],
  palette: 'array',
  created_by: 'string',
  created_at: timestamp,
};
/** DECISIONS 2 */
const tenant: Shape = {
  id: 'string',
  name: 'string',
  slug: 'string',
  settings: 'object',
  created_by: 'string',
  created_at: timestamp,
  updated_at: timestamp,
};
const profile: Shape = {
  id: 'string',
  email: 'string',
  phone: 'string|null',
  first_name: 'string|null',
  last_name: 'string|null',
  avatar_url: 'string|null',
  default_tenant_id: 'string|null',
  tenants: [{ id: 'string', name: 'string', role: 'string' }],
};
/** DECISIONS 0: every list. */
const listOf = (item: Shape): Shape => ({
  items: [item],
  total: 'number',
  page: 'number',
  pageSize: 'number',
});
/** DECISIONS 4 */
const collabUser: Shape = { id: 'string', email: 'string', username: 'string', displayName: 'string|null' };
const workspace: Shape = {
  id: 'string',
  name: 'string',
  createdBy: 'string',
  createdAt: timestamp,
  role: 'string',
};
/** 2.8 */
const part: Shape = {
  id: 'string',
  workspace: 'string',
  partNumber: 'string',
  name: 'string',
  description: 'string',
  domain: 'string',
  uom: 'string',
  lifecycle: 'string',
  tags: 'array',
  attributes: 'object',
  manufacturerName: 'string|null',
  manufacturerPartNumber: 'string|null',
  unitCost: 'number|null',
  currency: 'string|null',
  rohsCompliant: 'boolean|null',
  reachCompliant: 'boolean|null',
  conflictMinerals: 'string|null',
};
const partVersion: Shape = { id: 'string', revision: 'string', status: 'string' };
/** 2.9 */
const bom: Shape = {
  id: 'string',
  workspace: 'string',
  assemblyPartId: 'string',
  assemblyVersionId: 'string|null',
  type: 'string',
  revision: 'string',
  status: 'string',
  changeNote: 'string|null',
};
const bomItem: Shape = {
  id: 'string',
  parentItemId: 'string|null',
  childPartId: 'string',
  childVersionId: 'string|null',
  qty: 'number',
  uom: 'string',
  refdes: 'string',
  notes: 'string',
  sortIndex: 'number',
  attributes: 'object',
  alternates: 'array',
};
const bomDetail: Shape = { ...(bom as Record<string, Shape>), tree: [bomItem] };
/** Rows read, rows valid, and the problems of the others (an empty list for a clean file). */
const importReport: Shape = { rows: 'number', valid: 'number', errors: 'array' };
/** 2.11 and DECISIONS 6 */
const sharedFile: Shape = {
  filename: 'string',
  etag: 'string',
  size: 'number',
  contentType: 'string',
  sha256: 'string',
};
const uploadResult: Shape = { ...(sharedFile as Record<string, Shape>), versionId: 'string' };
const branch: Shape = { branch: 'string', workspace: 'string', username: 'string' };
const lock: Shape = { path: 'string', owner: 'string', lockId: 'string' };
const review: Shape = { id: 'string', path: 'string', reviewerEmail: 'string', status: 'string' };
const reviewTask: Shape = { id: 'string', title: 'string', status: 'string' };
const task: Shape = { id: 'string', path: 'string', title: 'string', status: 'string', sortIndex: 'number' };
const template: Shape = { id: 'string', name: 'string', checklist: 'array' };
const invitation: Shape = { email: 'string', workspace: 'string', role: 'string' };

const CSV = /^text\/csv/;
const XLSX = /^application\/vnd\.openxmlformats-officedocument\.spreadsheetml\.sheet/;
const PNG = /^image\/png/;

const api = (method: Call['method'], url: string, rest: Partial<Call> = {}): Call => ({
  host: 'api',
  method,
  url,
  ...rest,
});
const collab = (method: Call['method'], url: string, rest: Partial<Call> = {}): Call => ({
  host: 'collab',
  method,
  url,
  ...rest,
});

let unique = 0;
/** A fresh suffix per call (rows that create named things run once, but stay distinct from fixtures). */
const fresh = () => `${Date.now().toString(36)}${(unique++).toString(36)}`;

export const ROWS: ContractRow[] = [
  // ---- 4.1 API host: authentication ----
  {
    section: '4.1',
    method: 'POST',
    path: '/auth/login',
    role: 'anonymous',
    calls: (f) => [
      api('POST', '/auth/login', {
        body: { email: f.api.email, password: f.api.password },
        shape: authResponse,
      }),
    ],
  },
  {
    section: '4.1',
    method: 'POST',
    path: '/auth/phone-login',
    role: 'anonymous',
    calls: (f) => [
      api('POST', '/auth/phone-login', {
        body: { phone_number: f.api.phone, password: f.api.password },
        shape: authResponse,
      }),
    ],
  },
  {
    section: '4.1',
    method: 'POST',
    path: '/auth/magic-link',
    role: 'anonymous',
    calls: (f) => [api('POST', '/auth/magic-link', { body: { email: f.api.newEmail }, shape: message })],
  },
  {
    section: '4.1',
    method: 'POST',
    path: '/auth/phone-otp',
    role: 'anonymous',
    calls: (f) => [
      api('POST', '/auth/phone-otp', { body: { phone_number: f.api.newPhone }, shape: message }),
    ],
  },
  {
    section: '4.1',
    method: 'POST',
    path: '/auth/verify-phone-otp',
    role: 'anonymous',
    calls: (f) => [
      api('POST', '/auth/verify-phone-otp', {
        body: { phone_number: f.api.otpPhone, token: f.api.otpCode },
        shape: authResponse,
      }),
    ],
  },

  // ---- 4.2 API host: AI image tools ----
  {
    section: '4.2',
    method: 'POST',
    path: '/image-generation-providerA',
    role: 'user',
    calls: () => [
      api('POST', '/image-generation-providerA', {
        body: { prompt: 'a bracket', nbr_images: 1, folder_path: '/contract' },
        shape: imageResult,
      }),
    ],
  },
  {
    section: '4.2',
    method: 'POST',
    path: '/image-generation-providerB',
    role: 'user',
    calls: () => [
      api('POST', '/image-generation-providerB', {
        body: { prompt: 'an enclosure', negative_prompt: 'text', nbr_images: 1, folder_path: '/contract' },
        shape: imageResult,
      }),
    ],
  },
  {
    section: '4.2',
    method: 'POST',
    path: '/image-generation-product-photo',
    role: 'user',
    calls: (f) => [
      api('POST', '/image-generation-product-photo', {
        body: {
          prompt: 'studio light',
          negative_prompt: 'shadows',
          reference_image: f.api.pngUrl,
          nbr_images: 1,
          folder_path: '/contract',
        },
        shape: imageResult,
      }),
    ],
  },
  {
    section: '4.2',
    method: 'POST',
    path: '/image-generation-product-mockups',
    role: 'user',
    // "response shape: not shown": DECISIONS 3 gives it the product photo's.
    calls: (f) => [
      api('POST', '/image-generation-product-mockups', {
        body: {
          prompt: 'on a desk',
          negative_prompt: 'clutter',
          reference_image: f.api.pngUrl,
          nbr_images: 1,
          folder_path: '/contract',
        },
        shape: imageResult,
      }),
    ],
  },
  {
    section: '4.2',
    method: 'POST',
    path: '/image-analysis',
    role: 'user',
    calls: (f) => [
      api('POST', '/image-analysis', {
        body: { prompt: 'What colour is it?', reference_image: f.api.pngUrl },
        shape: {
          status: 'string',
          analysis: 'string',
          error_message: 'string|null',
          created_at: timestamp,
        },
      }),
    ],
  },
  {
    section: '4.2',
    method: 'POST',
    path: '/imgtool-vectorize',
    role: 'user',
    calls: (f) => [
      api('POST', '/imgtool-vectorize', {
        body: { prompt: 'clean outline', reference_image: f.api.pngUrl },
        shape: imageResult,
      }),
    ],
  },
  {
    section: '4.2',
    method: 'POST',
    path: '/imgtool-remove-background',
    role: 'user',
    calls: (f) => [
      api('POST', '/imgtool-remove-background', {
        body: { reference_image: f.api.pngUrl },
        shape: imageResult,
      }),
    ],
  },
  {
    section: '4.2',
    method: 'POST',
    path: '/imgtool-upscale',
    role: 'user',
    calls: (f) => [
      api('POST', '/imgtool-upscale', {
        body: { image_path: f.api.pngPath, scale_factor: 2, mode: 'clarity' },
        shape: imageResult,
      }),
    ],
  },
  {
    section: '4.2',
    method: 'POST',
    path: '/imgtool-create-style',
    role: 'user',
    calls: (f) => [
      api('POST', '/imgtool-create-style', {
        body: { name: `Style ${fresh()}`, reference_images: [f.api.pngPath], description: 'bold' },
        shape: style,
      }),
    ],
  },
  {
    section: '4.2',
    method: 'GET',
    path: '/imgtool-list-styles',
    role: 'user',
    calls: () => [api('GET', '/imgtool-list-styles', { shape: { items: [style] } })],
  },
  {
    section: '4.2',
    method: 'GET',
    path: '/imgtool-get-style/{style_id}',
    role: 'user',
    calls: (f) => [api('GET', `/imgtool-get-style/${f.api.styleId}`, { shape: style })],
  },

  // ---- 4.3 API host: files ----
  {
    section: '4.3',
    method: 'POST',
    path: '/files/upload',
    role: 'user',
    calls: () => [
      api('POST', '/files/upload', {
        form: {
          fields: {
            product_id: 'prod-1',
            folder_path: '/contract',
            description: 'a drawing',
            tags: ['cad', 'rev-a'],
            public: 'false',
            replace_if_exists: 'false',
          },
          files: [
            { field: 'file', filename: `upload-${fresh()}.txt`, content: 'hello', contentType: 'text/plain' },
          ],
        },
        // The parameters sent come back: both tags, the product.
        shape: { ...(fileRecord as Record<string, Shape>), product_id: 'string', tags: ['string'] },
      }),
    ],
  },
  {
    section: '4.3',
    method: 'POST',
    path: '/files/multiple-upload',
    role: 'user',
    calls: () => [
      api('POST', '/files/multiple-upload', {
        form: {
          fields: { product_id: 'prod-1', folder_path: '/contract' },
          files: [
            { field: 'files', filename: `multi-a-${fresh()}.txt`, content: 'a', contentType: 'text/plain' },
            { field: 'files', filename: `multi-b-${fresh()}.txt`, content: 'b', contentType: 'text/plain' },
          ],
        },
        shape: { items: [{ name: 'string', status: 'number', file: fileRecord }] },
      }),
    ],
  },
  {
    section: '4.3',
    method: 'GET',
    path: '/files/{file_id}/download',
    role: 'user',
    calls: (f) => [
      api('GET', `/files/${f.api.fileId}/download`, { contentType: PNG }),
      api('GET', `/files/${f.api.fileId}/download`, {
        as: 'anonymous',
        query: { token: f.api.downloadToken },
        contentType: PNG,
      }),
    ],
  },
  {
    section: '4.3',
    method: 'GET',
    path: '/files/{file_id}/revisions',
    role: 'user',
    calls: (f) => [
      api('GET', `/files/${f.api.fileId}/revisions`, {
        shape: listOf({ id: 'string', file_id: 'string', created_at: timestamp }),
      }),
    ],
  },
  {
    section: '4.3',
    method: 'GET',
    path: '/files/{file_id}/revisions/{revision_id}',
    role: 'user',
    calls: (f) => [
      api('GET', `/files/${f.api.fileId}/revisions/${f.api.firstRevisionId}`, {
        shape: { id: 'string', file_id: 'string', size: 'number', created_at: timestamp },
      }),
    ],
  },
  {
    section: '4.3',
    method: 'POST',
    path: '/files/{file_id}/revert/{revision_id}',
    role: 'user',
    calls: (f) => [
      api('POST', `/files/${f.api.fileId}/revert/${f.api.firstRevisionId}`, { shape: fileRecord }),
    ],
  },
  {
    section: '4.3',
    method: 'GET',
    path: '/files/{file_id}/cad-metadata',
    role: 'user',
    calls: (f) => [
      api('GET', `/files/${f.api.fileId}/cad-metadata`, {
        shape: { file_id: 'string', metadata: 'object' },
      }),
    ],
  },
  {
    section: '4.3',
    method: 'POST',
    path: '/files/{file_id}/annotations',
    role: 'user',
    calls: (f) => [
      api('POST', `/files/${f.api.fileId}/annotations`, {
        body: {
          text: 'check this edge',
          position: { x: 1, y: 2, z: 3 },
          target: { type: 'point' },
          color: '#ff0000',
          status: 'open',
        },
        shape: annotation,
      }),
    ],
  },
  {
    section: '4.3',
    method: 'GET',
    path: '/files/{file_id}/annotations',
    role: 'user',
    calls: (f) => [api('GET', `/files/${f.api.fileId}/annotations`, { shape: listOf(annotation) })],
  },
  {
    section: '4.3',
    method: 'PUT',
    path: '/files/{file_id}/permissions',
    role: 'user',
    calls: (f) => [
      api('PUT', `/files/${f.api.fileId}/permissions`, {
        body: { view: [], edit: [], delete: [] },
        shape: { permissions: { view: 'array', edit: 'array', delete: 'array' } },
      }),
    ],
  },
  {
    section: '4.3',
    method: 'GET',
    path: '/files/{file_id}/access-token',
    role: 'user',
    calls: (f) => [
      api('GET', `/files/${f.api.fileId}/access-token`, {
        shape: { token: 'string', expires_at: timestamp },
      }),
    ],
  },
  {
    section: '4.3',
    method: 'GET',
    path: '/files/{file_id}/preview, /files/{file_id}/thumbnail',
    role: 'user',
    calls: (f) => [
      api('GET', `/files/${f.api.fileId}/preview`, { contentType: /^image\// }),
      api('GET', `/files/${f.api.fileId}/thumbnail`, { contentType: /^image\// }),
    ],
  },

  // ---- 4.4 API host: tenants and profile (bodies: DECISIONS 2) ----
  {
    section: '4.4',
    method: 'POST',
    path: '/tenant/create',
    role: 'user',
    calls: () => [api('POST', '/tenant/create', { body: { name: `Org ${fresh()}` }, shape: tenant })],
  },
  {
    section: '4.4',
    method: 'GET',
    path: '/tenants',
    role: 'user',
    calls: () => [
      api('GET', '/tenants', {
        shape: { items: [{ ...(tenant as Record<string, Shape>), role: 'string' }] },
      }),
    ],
  },
  {
    section: '4.4',
    method: 'GET',
    path: '/tenant/{tenant_id}',
    role: 'user',
    calls: (f) => [api('GET', `/tenant/${f.api.tenantId}`, { shape: tenant })],
  },
  {
    section: '4.4',
    method: 'PUT',
    path: '/tenant/{tenant_id}',
    role: 'tenant-admin',
    roleNote: 'DECISIONS 2: PUT /tenant/{id} needs admin+',
    calls: (f) => [
      api('PUT', `/tenant/${f.api.tenantId}`, { body: { name: `Renamed ${fresh()}` }, shape: tenant }),
    ],
  },
  {
    section: '4.4',
    method: 'GET',
    path: '/profile',
    role: 'user',
    calls: () => [api('GET', '/profile', { shape: profile })],
  },

  // ---- 4.5 Collaboration host: bootstrap, configuration, auth helpers ----
  {
    section: '4.5',
    method: 'GET',
    path: '/v1/config',
    role: 'viewer',
    calls: () => [collab('GET', '/v1/config', { shape: { branchSuffixWrites: 'boolean' } })],
  },
  {
    section: '4.5',
    method: 'GET',
    path: '/api/auth/config',
    role: 'anonymous',
    calls: () => [collab('GET', '/api/auth/config', { shape: { requiresInvitation: 'boolean' } })],
  },
  {
    section: '4.5',
    method: 'GET',
    path: '/api/session',
    role: 'viewer',
    // The signed-in caller's user, and `{ user: null }` without a session (DECISIONS 4: `{ user }`).
    calls: () => [
      collab('GET', '/api/session', { shape: { user: collabUser } }),
      collab('GET', '/api/session', { as: 'anonymous', shape: { user: 'null' } }),
    ],
  },
  {
    section: '4.5',
    method: 'GET',
    path: '/v1/workspaces',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/workspaces', {
        query: { username: f.collab.usernames.viewer },
        shape: { items: [workspace] },
      }),
    ],
  },
  {
    section: '4.5',
    method: 'POST',
    path: '/v1/workspaces',
    role: 'viewer',
    calls: () => [collab('POST', '/v1/workspaces', { body: { name: `ct-${fresh()}` }, shape: workspace })],
  },
  {
    section: '4.5',
    method: 'GET',
    path: '/v1/users',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/users', {
        query: { workspace: f.collab.workspace },
        shape: { items: [{ username: 'string', online: 'boolean' }] },
      }),
    ],
  },
  {
    section: '4.5',
    method: 'POST',
    path: '/v1/users/init',
    role: 'viewer',
    calls: (f) => [
      collab('POST', '/v1/users/init', {
        body: { workspace: f.collab.workspace, username: f.collab.usernames.viewer },
        shape: { user: collabUser },
      }),
    ],
  },
  {
    section: '4.5',
    method: 'GET',
    path: '/v1/events',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/events', {
        query: { workspace: f.collab.workspace, username: f.collab.usernames.viewer },
        stream: true,
        contentType: /^text\/event-stream/,
      }),
    ],
  },

  // ---- 4.6 Collaboration host: parts ----
  {
    section: '4.6',
    method: 'POST',
    path: '/v1/parts',
    role: 'engineer',
    calls: (f) => [
      collab('POST', '/v1/parts', {
        body: {
          workspace: f.collab.workspace,
          partNumber: `CT-${fresh()}`,
          name: 'Bracket',
          domain: 'other',
        },
        status: [201],
        shape: part,
      }),
    ],
  },
  {
    section: '4.6',
    method: 'GET',
    path: '/v1/parts',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/parts', {
        query: {
          workspace: f.collab.workspace,
          q: 'CT',
          domain: 'other',
          lifecycle: 'prototype',
          tag: 'contract',
          sort: 'part_number',
          dir: 'asc',
          page: 1,
          pageSize: 50,
        },
        shape: listOf(part),
      }),
    ],
  },
  {
    section: '4.6',
    method: 'GET',
    path: '/v1/parts/:id',
    role: 'viewer',
    calls: (f) => [
      collab('GET', `/v1/parts/${f.collab.part.id}`, {
        query: { workspace: f.collab.workspace },
        shape: { ...(part as Record<string, Shape>), versions: 'array' },
      }),
    ],
  },
  {
    section: '4.6',
    method: 'PATCH',
    path: '/v1/parts/:id',
    role: 'engineer',
    calls: (f) => [
      collab('PATCH', `/v1/parts/${f.collab.part.id}`, {
        body: {
          name: 'Bracket B',
          description: 'steel',
          uom: 'each',
          tags: ['contract'],
          attributes: { k: 'v' },
        },
        shape: part,
      }),
    ],
  },
  {
    section: '4.6',
    method: 'POST',
    path: '/v1/parts/:id/versions',
    role: 'engineer',
    calls: (f) => [
      collab('POST', `/v1/parts/${f.collab.part.id}/versions`, {
        body: { revision: 'B', changeNote: 'thicker', data: { mass: 2 } },
        status: [201],
        shape: partVersion,
      }),
    ],
  },
  {
    section: '4.6',
    method: 'GET',
    path: '/v1/parts/:id/versions',
    role: 'viewer',
    calls: (f) => [
      collab('GET', `/v1/parts/${f.collab.part.id}/versions`, {
        query: { workspace: f.collab.workspace },
        shape: { items: [partVersion] },
      }),
    ],
  },
  {
    section: '4.6',
    method: 'POST',
    path: '/v1/parts/:id/versions/:versionId/submit',
    role: 'engineer',
    calls: (f) => [
      collab('POST', `/v1/parts/${f.collab.draft.partId}/versions/${f.collab.draft.versionId}/submit`, {
        shape: partVersion,
      }),
    ],
  },
  {
    section: '4.6',
    method: 'POST',
    path: '/v1/parts/:id/versions/:versionId/approve',
    role: 'manager',
    calls: (f) => [
      collab(
        'POST',
        `/v1/parts/${f.collab.toApprove.partId}/versions/${f.collab.toApprove.versionId}/approve`,
        {
          shape: partVersion,
        },
      ),
    ],
  },
  {
    section: '4.6',
    method: 'POST',
    path: '/v1/parts/:id/versions/:versionId/reject',
    role: 'manager',
    calls: (f) => [
      collab('POST', `/v1/parts/${f.collab.toReject.partId}/versions/${f.collab.toReject.versionId}/reject`, {
        body: { reason: 'tolerances missing' },
        shape: partVersion,
      }),
    ],
  },
  {
    section: '4.6',
    method: 'GET',
    path: '/v1/parts/:id/where-used',
    role: 'viewer',
    calls: (f) => [
      collab('GET', `/v1/parts/${f.collab.childPartId}/where-used`, {
        query: { workspace: f.collab.workspace },
        shape: { items: 'array' },
      }),
    ],
  },
  {
    section: '4.6',
    method: 'POST',
    path: '/v1/parts/import',
    role: 'engineer',
    calls: (f) => [
      collab('POST', '/v1/parts/import', {
        form: {
          fields: { dryRun: 'true', workspace: f.collab.workspace },
          files: [
            {
              field: 'file',
              filename: 'parts.csv',
              content: `part_number,name\nIMP-${fresh()},Imported\n`,
              contentType: 'text/csv',
            },
          ],
        },
        shape: importReport,
      }),
    ],
  },

  // ---- 4.7 Collaboration host: BOMs ----
  {
    section: '4.7',
    method: 'POST',
    path: '/v1/boms',
    role: 'engineer',
    calls: (f) => [
      collab('POST', '/v1/boms', {
        body: {
          workspace: f.collab.workspace,
          assemblyPartId: f.collab.assembly.partId,
          assemblyVersionId: f.collab.assembly.versionId,
          type: 'engineering',
          revision: 'C',
          changeNote: 'first cut',
        },
        status: [201],
        shape: bom,
      }),
    ],
  },
  {
    section: '4.7',
    method: 'GET',
    path: '/v1/boms',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/boms', {
        query: {
          workspace: f.collab.workspace,
          type: 'engineering',
          status: 'draft',
          assemblyPartId: f.collab.part.id,
          assemblyPn: 'CT-PART',
          page: 1,
          pageSize: 50,
        },
        shape: { items: 'array', total: 'number', page: 'number', pageSize: 'number' },
      }),
    ],
  },
  {
    section: '4.7',
    method: 'GET',
    path: '/v1/boms/:id',
    role: 'viewer',
    calls: (f) => [
      collab('GET', `/v1/boms/${f.collab.bom.id}`, {
        query: { workspace: f.collab.workspace },
        shape: bomDetail,
      }),
    ],
  },
  {
    section: '4.7',
    method: 'POST',
    path: '/v1/boms/:id/items',
    role: 'engineer',
    calls: (f) => [
      collab('POST', `/v1/boms/${f.collab.bom.id}/items`, {
        body: {
          items: [
            {
              id: f.collab.bom.itemId,
              qty: 2,
              uom: 'each',
              refdes: 'R1,R2',
              notes: 'two',
              sortIndex: 1,
              attributes: { side: 'top' },
              _op: 'upsert',
            },
          ],
        },
        shape: bomDetail,
      }),
    ],
  },
  {
    section: '4.7',
    method: 'POST',
    path: '/v1/boms/:id/submit',
    role: 'engineer',
    calls: (f) => [collab('POST', `/v1/boms/${f.collab.bomToSubmit}/submit`, { shape: bom })],
  },
  {
    section: '4.7',
    method: 'POST',
    path: '/v1/boms/:id/approve',
    role: 'manager',
    calls: (f) => [collab('POST', `/v1/boms/${f.collab.bomToApprove}/approve`, { shape: bom })],
  },
  {
    section: '4.7',
    method: 'POST',
    path: '/v1/boms/:id/reject',
    role: 'manager',
    calls: (f) => [
      collab('POST', `/v1/boms/${f.collab.bomToReject}/reject`, { body: { reason: 'no' }, shape: bom }),
    ],
  },
  {
    section: '4.7',
    method: 'GET',
    path: '/v1/boms/:id/diff',
    role: 'viewer',
    calls: (f) => [
      collab('GET', `/v1/boms/${f.collab.bom.id}/diff`, {
        query: {
          workspace: f.collab.workspace,
          leftRev: f.collab.bom.revision,
          rightRev: f.collab.bom.revision,
        },
        shape: 'object',
      }),
    ],
  },
  {
    section: '4.7',
    method: 'POST',
    path: '/v1/boms/import',
    role: 'engineer',
    calls: (f) => [
      collab('POST', '/v1/boms/import', {
        form: {
          fields: { bomId: f.collab.bom.id, dryRun: 'true' },
          files: [
            {
              field: 'file',
              filename: 'bom.csv',
              content: `child_part_number,qty,refdes\n${f.collab.childPartNumber},3,C1-C3\n`,
              contentType: 'text/csv',
            },
          ],
        },
        shape: importReport,
      }),
    ],
  },
  {
    section: '4.7',
    method: 'GET',
    path: '/v1/boms/:id/export.csv',
    role: 'viewer',
    calls: (f) => [
      collab('GET', `/v1/boms/${f.collab.bom.id}/export.csv`, {
        query: { workspace: f.collab.workspace },
        contentType: CSV,
      }),
    ],
  },
  {
    section: '4.7',
    method: 'GET',
    path: '/v1/boms/:id/export.xlsx',
    role: 'viewer',
    calls: (f) => [
      collab('GET', `/v1/boms/${f.collab.bom.id}/export.xlsx`, {
        query: { workspace: f.collab.workspace },
        contentType: XLSX,
      }),
    ],
  },
  {
    section: '4.7',
    method: 'GET',
    path: '/v1/boms/:id/export.erp.csv',
    role: 'viewer',
    calls: (f) => [
      collab('GET', `/v1/boms/${f.collab.bom.id}/export.erp.csv`, {
        query: { workspace: f.collab.workspace },
        contentType: CSV,
      }),
    ],
  },
  {
    section: '4.7',
    method: 'GET',
    path: '/v1/boms/:id/cost-rollup',
    role: 'viewer',
    calls: (f) => [
      collab('GET', `/v1/boms/${f.collab.bom.id}/cost-rollup`, {
        query: { workspace: f.collab.workspace },
        shape: { bomId: 'string', totals: 'array' },
      }),
    ],
  },
  {
    section: '4.7',
    method: 'POST',
    path: '/v1/boms/:id/items/:itemId/alternates',
    role: 'engineer',
    calls: (f) => [
      collab('POST', `/v1/boms/${f.collab.bom.id}/items/${f.collab.bom.itemId}/alternates`, {
        body: {
          alternates: [
            { partId: f.collab.alternatePartId, approval: 'conditional', rationale: 'second source' },
          ],
        },
        shape: 'object',
      }),
    ],
  },
  {
    section: '4.7',
    method: 'POST',
    path: '/v1/boms/:id/derive-mbom',
    role: 'engineer',
    calls: (f) => [
      collab('POST', `/v1/boms/${f.collab.bom.id}/derive-mbom`, {
        body: { revision: 'M1', changeNote: 'for the line' },
        status: [201],
        shape: bom,
      }),
    ],
  },
  {
    section: '4.7',
    method: 'POST',
    path: '/v1/boms/:id/effectivity/validate',
    role: 'engineer',
    calls: (f) => [
      collab('POST', `/v1/boms/${f.collab.bom.id}/effectivity/validate`, {
        body: { effectivity: { date_from: '2027-01-01' }, itemId: f.collab.bom.itemId },
        shape: 'object',
      }),
    ],
  },
  {
    section: '4.7',
    method: 'GET',
    path: '/v1/workspaces/:name/bom-settings',
    role: 'viewer',
    calls: (f) => [
      collab('GET', `/v1/workspaces/${f.collab.workspace}/bom-settings`, {
        shape: { numberingRules: 'object', domainTemplates: 'object' },
      }),
    ],
  },
  {
    section: '4.7',
    method: 'POST',
    path: '/v1/workspaces/:name/bom-settings',
    role: 'manager',
    calls: (f) => [
      collab('POST', `/v1/workspaces/${f.collab.workspace}/bom-settings`, {
        body: { numbering_rules: {}, domain_templates: {} },
        shape: { numberingRules: 'object', domainTemplates: 'object' },
      }),
    ],
  },

  // ---- 4.8 Collaboration host: files, uploads, serving ----
  {
    section: '4.8',
    method: 'GET',
    path: '/v1/files',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/files', {
        query: { workspace: f.collab.workspace, username: f.collab.usernames.engineer },
        shape: { items: [{ filename: 'string', etag: 'string' }] },
      }),
    ],
  },
  {
    section: '4.8',
    method: 'GET',
    path: '/v1/files/all',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/files/all', {
        query: { workspace: f.collab.workspace },
        shape: { items: [{ filename: 'string', username: 'string', etag: 'string' }] },
      }),
    ],
  },
  {
    section: '4.8',
    method: 'GET',
    path: '/v1/file',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/file', {
        query: {
          workspace: f.collab.workspace,
          username: f.collab.usernames.engineer,
          filename: f.collab.file.filename,
        },
        shape: { text: 'string' },
      }),
    ],
  },
  {
    section: '4.8',
    method: 'GET',
    path: '/v1/filemeta',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/filemeta', {
        query: {
          workspace: f.collab.workspace,
          username: f.collab.usernames.engineer,
          filename: f.collab.file.filename,
        },
        shape: { size: 'number', contentType: 'string', etag: 'string', sha256: 'string' },
      }),
    ],
  },
  {
    section: '4.8',
    method: 'POST',
    path: '/v1/upload',
    role: 'engineer',
    roleNote: 'the row names no role; a viewer writes nothing',
    calls: (f) => [
      collab('POST', '/v1/upload', {
        query: { workspace: f.collab.workspace, username: f.collab.usernames.engineer },
        form: {
          fields: { baseVersion: f.collab.uploadTarget.etag, message: 'update' },
          files: [
            {
              field: 'file',
              filename: f.collab.uploadTarget.filename,
              content: 'v2',
              contentType: 'text/plain',
            },
          ],
        },
        status: [201],
        shape: uploadResult,
      }),
    ],
  },
  {
    section: '4.8',
    method: 'POST',
    path: '/v1/uploads',
    role: 'engineer',
    roleNote: 'the row names no role; a viewer writes nothing',
    calls: (f) => [
      collab('POST', '/v1/uploads', {
        query: { workspace: f.collab.workspace, username: f.collab.usernames.engineer },
        form: {
          fields: { replace: 'true' },
          files: [
            { field: 'files[]', filename: `batch-a-${fresh()}.txt`, content: 'a', contentType: 'text/plain' },
            { field: 'files[]', filename: `batch-b-${fresh()}.txt`, content: 'b', contentType: 'text/plain' },
          ],
        },
        status: [200, 201, 207],
        shape: { items: 'array' },
      }),
    ],
  },
  {
    section: '4.8',
    method: 'DELETE',
    path: '/v1/file',
    role: 'engineer',
    roleNote: 'the row names no role; a viewer writes nothing',
    calls: (f) => [
      collab('DELETE', '/v1/file', {
        query: {
          workspace: f.collab.workspace,
          username: f.collab.usernames.engineer,
          filename: f.collab.fileToDelete,
        },
        shape: { key: 'string' },
      }),
    ],
  },
  {
    section: '4.8',
    method: 'GET',
    path: '/v1/serve/:workspace/:username/:filename',
    role: 'viewer',
    calls: (f) => [
      collab(
        'GET',
        `/v1/serve/${f.collab.workspace}/${f.collab.usernames.engineer}/${f.collab.file.filename}`,
        {
          contentType: /^text\/plain/,
        },
      ),
    ],
  },
  {
    section: '4.8',
    method: 'GET',
    path: '/signed-url',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/signed-url', {
        query: {
          path: `/v1/serve/${f.collab.workspace}/${f.collab.usernames.engineer}/${f.collab.file.filename}`,
          ttlMs: 60_000,
        },
        shape: { url: 'string', expiresAt: 'timestamp|number' },
      }),
    ],
  },
  {
    section: '4.8',
    method: 'GET',
    path: '/v1/serve-signed/:workspace/:username/:filename',
    role: 'anonymous',
    calls: (f) => [
      collab(
        'GET',
        `/v1/serve-signed/${f.collab.workspace}/${f.collab.usernames.engineer}/${f.collab.file.filename}`,
        {
          query: { expires: f.collab.signed.expires, sig: f.collab.signed.sig },
          contentType: /^text\/plain/,
        },
      ),
    ],
  },
  {
    section: '4.8',
    method: 'GET',
    path: '/v1/trash',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/trash', {
        query: { workspace: f.collab.workspace, username: f.collab.usernames.engineer },
        shape: { items: [{ key: 'string' }] },
      }),
    ],
  },
  {
    section: '4.8',
    method: 'POST',
    path: '/v1/trash/restore',
    role: 'engineer',
    roleNote: 'the row names no role; a viewer writes nothing',
    calls: (f) => [
      collab('POST', '/v1/trash/restore', {
        body: {
          workspace: f.collab.workspace,
          username: f.collab.usernames.engineer,
          key: f.collab.trashKey,
        },
        shape: 'object',
      }),
    ],
  },

  // ---- 4.9 Collaboration host: model viewing ----
  {
    section: '4.9',
    method: 'POST',
    path: '/api/viewer/translate-file',
    role: 'viewer',
    calls: (f) => [
      collab('POST', '/api/viewer/translate-file', {
        body: { workspace: f.collab.workspace, filename: f.collab.model },
        shape: 'object',
      }),
    ],
  },
  {
    section: '4.9',
    method: 'GET',
    path: '/api/viewer/status-map',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/api/viewer/status-map', {
        query: { workspace: f.collab.workspace },
        shape: [{ name: 'string', status: 'string', 'progress?': 'number' }],
      }),
    ],
  },
  {
    section: '4.9',
    method: 'GET',
    path: '/api/viewer/models/lookup',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/api/viewer/models/lookup', {
        query: { workspace: f.collab.workspace, filename: f.collab.translatedModel },
        shape: { modelId: 'string' },
      }),
    ],
  },

  // ---- 4.10 Collaboration host: history, branches, comments, locks, conflicts ----
  {
    section: '4.10',
    method: 'GET',
    path: '/v1/versions',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/versions', {
        query: { path: f.collab.file.path },
        shape: { items: [{ versionId: 'string', etag: 'string' }] },
      }),
    ],
  },
  {
    section: '4.10',
    method: 'GET',
    path: '/v1/timeline',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/timeline', {
        query: { path: f.collab.file.path, types: 'version,comment,task' },
        shape: { items: [{ type: 'string' }] },
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/revert',
    role: 'engineer',
    roleNote: 'the row names no role; a viewer writes nothing',
    calls: (f) => [
      collab('POST', '/v1/revert', {
        body: {
          path: f.collab.file.path,
          versionId: f.collab.file.versionId,
          message: 'back',
          author: f.collab.usernames.engineer,
        },
        shape: uploadResult,
      }),
    ],
  },
  {
    section: '4.10',
    method: 'GET',
    path: '/v1/branches',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/branches', {
        query: {
          workspace: f.collab.workspace,
          username: f.collab.usernames.engineer,
          base: f.collab.branched.filename,
        },
        shape: { items: [branch] },
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/branches/create',
    role: 'engineer',
    roleNote: 'the row names no role; a viewer writes nothing',
    calls: (f) => [
      collab('POST', '/v1/branches/create', {
        body: {
          workspace: f.collab.workspace,
          username: f.collab.usernames.engineer,
          base: f.collab.branched.filename,
          branch: 'contract-new',
        },
        status: [201],
        shape: branch,
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/branches/delete',
    role: 'engineer',
    roleNote: 'the row names no role; a viewer writes nothing',
    calls: (f) => [
      collab('POST', '/v1/branches/delete', {
        body: {
          workspace: f.collab.workspace,
          username: f.collab.usernames.engineer,
          base: f.collab.toDeleteBranch.filename,
          branch: f.collab.toDeleteBranch.branch,
        },
        shape: 'object',
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/merge',
    role: 'engineer',
    roleNote: 'the row names no role; a viewer writes nothing',
    calls: (f) => [
      collab('POST', '/v1/merge', {
        body: {
          workspace: f.collab.workspace,
          username: f.collab.usernames.engineer,
          filename: f.collab.toMerge.filename,
          fromBranch: f.collab.toMerge.branch,
          message: 'merge',
        },
        shape: uploadResult,
      }),
    ],
  },
  {
    section: '4.10',
    method: 'GET',
    path: '/v1/comments',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/comments', {
        query: { path: f.collab.file.path },
        shape: { items: [{ path: 'string', author: 'string', body: 'string' }] },
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/comments',
    role: 'viewer',
    calls: (f) => [
      collab('POST', '/v1/comments', {
        body: { path: f.collab.file.path, author: f.collab.usernames.viewer, body: 'looks good' },
        status: [201],
        shape: { path: 'string', author: 'string', body: 'string' },
      }),
    ],
  },
  {
    section: '4.10',
    method: 'GET',
    path: '/v1/locks',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/locks', {
        query: { path: f.collab.lockedPath },
        shape: { $or: [lock, 'null'] },
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/locks/lock',
    role: 'engineer',
    roleNote: 'the row names no role; a viewer writes nothing',
    calls: (f) => [
      collab('POST', '/v1/locks/lock', {
        body: { path: f.collab.freePath, owner: f.collab.usernames.engineer, ttlMs: 120_000 },
        shape: lock,
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/locks/unlock',
    role: 'engineer',
    roleNote: 'the lock’s holder',
    calls: (f) => [
      collab('POST', '/v1/locks/unlock', {
        body: { path: f.collab.unlockable.path, lockId: f.collab.unlockable.lockId },
        shape: { unlocked: 'boolean' },
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/locks/force-unlock',
    role: 'manager',
    roleNote: 'section 3.1: a manager-style override',
    calls: (f) => [
      collab('POST', '/v1/locks/force-unlock', {
        body: { path: f.collab.forceUnlockPath, author: f.collab.usernames.manager, message: 'needed' },
        shape: 'object',
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/locks/request',
    role: 'viewer',
    calls: (f) => [
      collab('POST', '/v1/locks/request', {
        body: { path: f.collab.lockedPath, from: f.collab.usernames.viewer },
        shape: 'object',
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/locks/lock-all',
    role: 'manager',
    calls: (f) => [
      collab('POST', '/v1/locks/lock-all', {
        body: { workspace: f.collab.workspace, owner: f.collab.usernames.manager, ttlMs: 60_000 },
        shape: 'object',
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/locks/unlock-all',
    role: 'manager',
    calls: (f) => [
      collab('POST', '/v1/locks/unlock-all', {
        body: { workspace: f.collab.workspace },
        shape: 'object',
      }),
    ],
  },
  {
    section: '4.10',
    method: 'GET',
    path: '/v1/conflicts',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/conflicts', {
        query: { workspace: f.collab.workspace, username: f.collab.usernames.engineer },
        shape: { items: [{ baseName: 'string', author: 'string' }] },
      }),
    ],
  },
  {
    section: '4.10',
    method: 'POST',
    path: '/v1/conflicts/resolve',
    role: 'engineer',
    roleNote: 'the row names no role; a viewer writes nothing',
    calls: (f) => [
      collab('POST', '/v1/conflicts/resolve', {
        body: {
          baseName: f.collab.conflict.baseName,
          acceptedPath: f.collab.conflict.acceptedPath,
          message: 'take theirs',
          author: f.collab.usernames.engineer,
        },
        shape: 'object',
      }),
    ],
  },

  // ---- 4.11 Collaboration host: reviews, tasks, analytics, templates, invitations ----
  {
    section: '4.11',
    method: 'GET',
    path: '/v1/reviews',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/reviews', {
        query: { path: f.collab.file.path },
        shape: { items: [{ ...(review as Record<string, Shape>), tasks: 'array' }] },
      }),
    ],
  },
  {
    section: '4.11',
    method: 'POST',
    path: '/v1/reviews',
    role: 'engineer',
    calls: (f) => [
      collab('POST', '/v1/reviews', {
        body: {
          path: f.collab.file.path,
          reviewerEmail: f.collab.viewerEmail,
          message: 'please check',
          dueAt: '2027-01-01T00:00:00.000Z',
          versionId: f.collab.file.versionId,
        },
        status: [201],
        shape: review,
      }),
    ],
  },
  {
    section: '4.11',
    method: 'PATCH',
    path: '/v1/reviews/:id',
    role: 'reviewer',
    roleNote: 'the row names no role: the review’s reviewer, a viewer',
    calls: (f) => [
      collab('PATCH', `/v1/reviews/${f.collab.review.id}`, {
        body: { status: 'in_review', dueAt: '2027-02-01T00:00:00.000Z' },
        shape: review,
      }),
    ],
  },
  {
    section: '4.11',
    method: 'POST',
    path: '/v1/reviews/:id/tasks',
    role: 'reviewer',
    calls: (f) => [
      collab('POST', `/v1/reviews/${f.collab.review.id}/tasks`, {
        body: { title: 'Fillets', description: 'all edges', dueAt: '2027-01-15T00:00:00.000Z' },
        status: [201],
        shape: reviewTask,
      }),
    ],
  },
  {
    section: '4.11',
    method: 'PATCH',
    path: '/v1/reviews/:id/tasks/:taskId',
    role: 'reviewer',
    roleNote: 'the row names no role: the review’s reviewer, a viewer',
    calls: (f) => [
      collab('PATCH', `/v1/reviews/${f.collab.review.id}/tasks/${f.collab.review.taskId}`, {
        body: { status: 'in_progress' },
        shape: reviewTask,
      }),
    ],
  },
  {
    section: '4.11',
    method: 'GET',
    path: '/v1/tasks',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/tasks', { query: { path: f.collab.file.path }, shape: { items: [task] } }),
    ],
  },
  {
    section: '4.11',
    method: 'POST',
    path: '/v1/tasks',
    role: 'engineer',
    roleNote: 'the row names no role; a viewer writes nothing',
    calls: (f) => [
      collab('POST', '/v1/tasks', {
        body: {
          path: f.collab.file.path,
          title: 'Tolerance stack',
          description: 'worst case',
          ownerEmail: f.collab.viewerEmail,
          dueAt: '2027-01-01T00:00:00.000Z',
          status: 'open',
        },
        status: [201],
        shape: task,
      }),
    ],
  },
  {
    section: '4.11',
    method: 'PATCH',
    path: '/v1/tasks/:id',
    role: 'task-owner',
    calls: (f) => [
      collab('PATCH', `/v1/tasks/${f.collab.taskOwned}`, {
        body: { status: 'in_progress', sortIndex: 3 },
        shape: task,
      }),
    ],
  },
  {
    section: '4.11',
    method: 'DELETE',
    path: '/v1/tasks/:id',
    role: 'task-creator',
    calls: (f) => [collab('DELETE', `/v1/tasks/${f.collab.taskToDelete}`, { shape: 'object' })],
  },
  {
    section: '4.11',
    method: 'GET',
    path: '/v1/workspace/stats',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/workspace/stats', {
        query: { workspace: f.collab.workspace },
        shape: { reviews: 'object', tasks: 'object' },
      }),
    ],
  },
  {
    section: '4.11',
    method: 'GET',
    path: '/v1/workspace/reviews',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/workspace/reviews', {
        query: { workspace: f.collab.workspace, status: 'all', limit: 10 },
        shape: { items: [review] },
      }),
    ],
  },
  {
    section: '4.11',
    method: 'GET',
    path: '/v1/workspace/tasks',
    role: 'viewer',
    calls: (f) => [
      collab('GET', '/v1/workspace/tasks', {
        query: { workspace: f.collab.workspace, status: 'all', limit: 10 },
        shape: { items: [task] },
      }),
    ],
  },
  {
    section: '4.11',
    method: 'GET',
    path: '/v1/review-templates',
    role: 'engineer',
    calls: (f) => [
      collab('GET', '/v1/review-templates', {
        query: { workspace: f.collab.workspace },
        shape: { items: [template] },
      }),
    ],
  },
  {
    section: '4.11',
    method: 'POST',
    path: '/v1/review-templates',
    role: 'manager',
    calls: () => [
      collab('POST', '/v1/review-templates', {
        body: { name: `Release ${fresh()}`, message: 'check all', checklist: ['Drawing', 'BOM'] },
        status: [201],
        shape: template,
      }),
    ],
  },
  {
    section: '4.11',
    method: 'DELETE',
    path: '/v1/review-templates/:id',
    role: 'manager',
    calls: (f) => [
      collab('DELETE', `/v1/review-templates/${f.collab.templateId}`, {
        query: { workspace: f.collab.workspace },
        shape: 'object',
      }),
    ],
  },
  {
    section: '4.11',
    method: 'POST',
    path: '/api/invitations/send',
    role: 'manager',
    calls: (f) => [
      collab('POST', '/api/invitations/send', {
        body: { email: `invite-${fresh()}@example.test`, workspace: f.collab.workspace, role: 'viewer' },
        status: [201],
        shape: invitation,
      }),
    ],
  },
  {
    section: '4.11',
    method: 'GET',
    path: '/api/invitations',
    role: 'manager',
    calls: (f) => [
      collab('GET', '/api/invitations', {
        query: { status: 'all', workspace: f.collab.workspace, limit: 10 },
        shape: { items: [invitation] },
      }),
    ],
  },
  {
    section: '4.11',
    method: 'POST',
    path: '/api/invitations/validate',
    role: 'anonymous',
    calls: (f) => [
      collab('POST', '/api/invitations/validate', {
        body: { invitationCode: f.collab.invitationCode },
        shape: { valid: 'boolean', workspace: 'string', role: 'string' },
      }),
    ],
  },
  {
    section: '4.11',
    method: 'POST',
    path: '/api/invitations/accept',
    role: 'invitee',
    calls: (f) => [
      collab('POST', '/api/invitations/accept', {
        body: { invitationCode: f.collab.invitationCode },
        shape: { workspace: 'string', role: 'string' },
      }),
    ],
  },
];
