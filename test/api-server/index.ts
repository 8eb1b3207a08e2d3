/**
 * The recorded Kubernetes API server for tests: see README.md beside this file.
 */
export { startApiServer, type ApiServerHandle, type ApiServerOptions, type RequestRecord } from './server.js';
export type { ForbidRule, K8sList, K8sObject, ObjectRef, Verb, WatchEventType } from './types.js';
export { StatusError, type Status } from './status.js';
export { netnsDialer, type PodDialer } from './dial.js';
