export {
  buildCatalog,
  catalogIdentity,
  CatalogBuildError,
  IMPLICIT_GRANT,
  identityInputFor,
  mcpAdapterKey,
  ResolvedEffectCatalog,
  type BuildCatalogInput,
  type CatalogEntry,
  type CatalogIdentityInput,
  type DiscoveredMcpTool,
  type SourceKind,
} from './resolved-catalog.js';
export { BUILTIN_TOOLSET_DEFINITIONS, TOOLS_LIST, type BuiltinDefinition } from './builtin-definitions.js';
export { CatalogCache, type CatalogCacheOptions, type EvictionReason } from './catalog-cache.js';
