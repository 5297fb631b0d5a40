import type { Express } from 'express';
import type { ClassType } from './db/data-source';
import type { BaseConfig, PlatformDeps, ServiceDefinition } from './deps';
import type { ApiRouter } from './http/api-router';
import type { DegradationCheck } from './http/create-app';
import type { OpenApiInfo } from './http/openapi';
import {
  createServiceApp,
  platformEntities,
  platformMigrations,
  registerPlatformConsumers,
} from './service-app';

/** Mounts one route, a group of routes or middleware on the service's router. */
export type RouteMount = (api: ApiRouter, app: Express) => void;

/** What a feature hands back when it is built: its routes, its consumers, and what others may use. */
export interface BuiltFeature<E = unknown> {
  /** The feature's routes (and middleware), mounted in this order after the features before it. */
  routes?: RouteMount[];
  /** Registers the feature's bus consumers; runs before the app is built. */
  consumers?(): Promise<void>;
  /**
   * Quality checks /readyz reports (`degraded: <why>`, still 200): work the feature has that is not
   * getting done (files stuck in processing), by check name.
   */
  health?: Record<string, DegradationCheck>;
  /** What later features receive under this feature's name. */
  exports: E;
}

/**
 * One feature module (STYLE.md, "One feature, one shape"): its tables, its migrations (kept in the
 * feature's `migrations/` folder) and how it is built from the platform deps and the exports of the
 * features listed before it.
 */
export interface Feature<C extends BaseConfig = BaseConfig, E = unknown, N = Record<string, never>> {
  name: string;
  entities?: ClassType[];
  migrations?: ClassType[];
  build(deps: PlatformDeps<C>, needs: N): BuiltFeature<E>;
}

/** Typing help only: `defineFeature({ name, entities, migrations, build })`. */
export function defineFeature<C extends BaseConfig, E, N = Record<string, never>>(
  feature: Feature<C, E, N>,
): Feature<C, E, N> {
  return feature;
}

/** The exports a built feature list holds, by feature name; a missing name is a wiring bug. */
function exportsView(built: Map<string, BuiltFeature>, asking: string): Record<string, unknown> {
  return new Proxy(
    {},
    {
      get(_target, name) {
        if (typeof name !== 'string') return undefined;
        const found = built.get(name);
        if (!found) {
          throw new Error(`feature ${asking} needs ${name}, which is not listed before it`);
        }
        return found.exports;
      },
    },
  );
}

export interface ServiceOptions<C extends BaseConfig> {
  name: string;
  /** Where the fs blob driver's pre-signed URLs are served. */
  blobRoutePrefix: string;
  openapi: Omit<OpenApiInfo, 'version'> & { version?: string };
  /** Where the operator routes live (`/system`, `/v1/system`). */
  opsPrefix: string;
  // biome-ignore lint/suspicious/noExplicitAny: a list of features with different export and need types
  features: Feature<C, any, any>[];
}

/**
 * A service as a list of features: its entities and migrations are the platform's plus every
 * feature's (TypeORM orders migrations by their timestamp), and each feature is built once per
 * runtime, in list order, for both the consumers and the app.
 */
export interface FeatureService<C extends BaseConfig> extends ServiceDefinition<C> {
  /** The exports of feature `name` as built for this runtime (tests reach services through it). */
  exportsOf<E>(deps: PlatformDeps<C>, name: string): E;
}

export function defineService<C extends BaseConfig>(options: ServiceOptions<C>): FeatureService<C> {
  const builds = new WeakMap<PlatformDeps<C>, Map<string, BuiltFeature>>();
  const buildAll = (deps: PlatformDeps<C>): Map<string, BuiltFeature> => {
    let built = builds.get(deps);
    if (!built) {
      built = new Map();
      for (const feature of options.features) {
        if (built.has(feature.name)) throw new Error(`feature ${feature.name} is listed twice`);
        built.set(feature.name, feature.build(deps, exportsView(built, feature.name)));
      }
      builds.set(deps, built);
    }
    return built;
  };
  return {
    name: options.name,
    entities: [...platformEntities, ...options.features.flatMap((f) => f.entities ?? [])],
    migrations: [...platformMigrations, ...options.features.flatMap((f) => f.migrations ?? [])],
    blobRoutePrefix: options.blobRoutePrefix,
    createApp(deps) {
      const built = buildAll(deps);
      return createServiceApp(deps, {
        openapi: options.openapi,
        opsPrefix: options.opsPrefix,
        health: Object.assign({}, ...[...built.values()].map((feature) => feature.health ?? {})),
        mount: (api, app) => {
          for (const feature of built.values()) for (const mount of feature.routes ?? []) mount(api, app);
        },
      });
    },
    async registerConsumers(deps) {
      await registerPlatformConsumers(deps);
      for (const feature of buildAll(deps).values()) await feature.consumers?.();
    },
    exportsOf<E>(deps: PlatformDeps<C>, name: string): E {
      const found = buildAll(deps).get(name);
      if (!found) throw new Error(`${options.name} has no feature ${name}`);
      return found.exports as E;
    },
  };
}
