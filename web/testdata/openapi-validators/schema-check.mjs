// Validates an OpenAPI document against the OpenAPI 3.1 JSON schema, printing
// the verdict as one JSON line.
import { Validator } from '@seriousme/openapi-schema-validator';
const v = new Validator();
const res = await v.validate(process.argv[2]);
console.log(JSON.stringify({ valid: res.valid, version: v.version, errors: res.errors ?? null }));
process.exit(res.valid ? 0 : 1);
