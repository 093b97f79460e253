// Generates client models from the AsyncAPI document with Modelina, the AsyncAPI project's own
// generator: TypeScript (compiled by the test), Kotlin, and protocol.d.ts (this library's types).
//   node shared/protocol/client/models.mjs OUT_DIR    writes OUT_DIR/{typescript,kotlin}/ and
//                                                     OUT_DIR/report.json (names and unions)
//   node shared/protocol/client/models.mjs --dts FILE writes the library's type declarations
// Node only (a build tool, not part of the library).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import modelina from '@asyncapi/modelina';

const { TypeScriptGenerator, KotlinGenerator } = modelina;
const HERE = dirname(fileURLToPath(import.meta.url));
const DOCUMENT = join(HERE, '..', 'asyncapi.json');

// Modelina's defaults (classes, enums): what a TypeScript app would generate and ship.
const TYPESCRIPT_CLASSES = {};
// The library's declarations: interfaces over the wire's JSON as it is (request_id, type), enums
// as string unions, constants (each event's type) as literals. Modelina writes a constant as
// Enum.KEY, which a string union has no namespace for, hence the constant constraint.
const TYPESCRIPT = {
  modelType: 'interface',
  enumType: 'union',
  rawPropertyNames: true,
  mapType: 'record',
  constraints: {
    constant: ({ constrainedMetaModel }) => {
      const constant = constrainedMetaModel.options.const;
      return constant === undefined ? undefined : JSON.stringify(constant.originalInput);
    },
  },
};

function describe(models) {
  // Each model's name, kind and, for a union, its members' names.
  return models.map(({ modelName, model }) => ({
    name: modelName,
    kind: model.constructor.name,
    members: Array.isArray(model.union) ? model.union.map((member) => member.name) : undefined,
  }));
}

async function generate(outDir) {
  const document = JSON.parse(readFileSync(DOCUMENT, 'utf8'));
  const report = {};

  for (const [language, options] of [
    ['typescript', TYPESCRIPT_CLASSES],
    ['typescript-interfaces', TYPESCRIPT],
  ]) {
    const generator = new TypeScriptGenerator(options);
    const models = await generator.generateCompleteModels(document, { exportType: 'named' });
    const dir = join(outDir, language);
    mkdirSync(dir, { recursive: true });
    for (const { modelName, result } of models) {
      writeFileSync(join(dir, `${modelName}.ts`), result + '\n');
    }
    report[language] = describe(models);
  }

  const kotlin = new KotlinGenerator();
  const ktModels = await kotlin.generateCompleteModels(document, { packageName: 'wordle.protocol' });
  const ktDir = join(outDir, 'kotlin');
  mkdirSync(ktDir, { recursive: true });
  for (const { modelName, result } of ktModels) {
    writeFileSync(join(ktDir, `${modelName}.kt`), result + '\n');
  }
  report.kotlin = describe(ktModels);

  writeFileSync(join(outDir, 'report.json'), JSON.stringify(report, null, 2) + '\n');
}

async function declarations(file) {
  // One .d.ts: every model, exported, in Modelina's order.
  const document = JSON.parse(readFileSync(DOCUMENT, 'utf8'));
  const typescript = new TypeScriptGenerator(TYPESCRIPT);
  const models = await typescript.generate(document);
  const body = models.map(({ result }) => `export ${result.trim()}`).join('\n\n');
  const header =
    '// Generated from shared/protocol/asyncapi.json by Modelina (models.mjs --dts): do not edit.\n' +
    '// Regenerate: node shared/protocol/client/models.mjs --dts shared/protocol/client/protocol.d.ts\n';
  writeFileSync(file, `${header}\n${body}\n`);
}

const [flag, target] = process.argv.slice(2);
if (flag === '--dts' && target) {
  await declarations(target);
} else if (flag && !flag.startsWith('--')) {
  await generate(flag);
} else {
  console.error('usage: node models.mjs OUT_DIR | --dts FILE');
  process.exit(2);
}
