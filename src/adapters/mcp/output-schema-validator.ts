// The SDK client asks for a validator for every listed tool's `outputSchema` when it lists tools and
// validates structured results against it. Its default (ajv with V8's backtracking RegExp and
// ajv-formats) would run a server's patterns on the supervisor's main thread, and an invalid one
// would throw out of the whole listing. Ours compiles through the same linear-time engine as input
// schemas (decision 56); a schema that does not compile fails that tool's structured results only.
// It compiles at the tool's first structured result, not at the listing (decision 120): a run calls
// few of a server's tools, and compiling every output schema up front was about half of the schema
// compiling a demo run did. The outcome of each validation is the same either way.
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { compileInputSchema, type CompiledInputSchema } from '../../core/index.js';

export const linearOutputSchemaValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    // The dialect tag is dropped as for input schemas: one validator dialect for all tools.
    const { $schema: _dialect, ...rest } = (schema ?? {}) as Record<string, unknown>;
    let compiled: CompiledInputSchema | null = null;
    return (input: unknown) => {
      compiled ??= compileInputSchema(rest);
      if (!compiled.ok) return { valid: false, data: undefined, errorMessage: `the server's outputSchema cannot be used: ${compiled.reason}` };
      const validate = compiled.validate;
      if (validate(input)) return { valid: true, data: input as T, errorMessage: undefined };
      const why = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`).join('; ');
      return { valid: false, data: undefined, errorMessage: why || 'does not match the outputSchema' };
    };
  },
};
