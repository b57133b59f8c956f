#!/usr/bin/env bash
# Creates packages/<dir> (or apps/<dir> with APPS=1) with the standard layout:
# package.json (source condition for dev, dist for publish), tsconfigs, vitest config, README.
set -euo pipefail
dir=$1; name=${2:-@holdfast/$1}; desc=${3:-"holdfast $1"}
root=$(cd "$(dirname "$0")/../.." && pwd)
base=packages; [ "${APPS:-0}" = 1 ] && base=apps
p=$root/$base/$dir
mkdir -p "$p/src" "$p/test"
cat > "$p/package.json" <<JSON
{
  "name": "$name",
  "version": "0.1.0",
  "description": "$desc",
  "license": "Apache-2.0",
  "type": "module",
  "exports": {
    ".": {
      "@holdfast/source": "./src/index.ts",
      "types": "./dist/index.d.ts",
      "import": "./dist/index.js"
    }
  },
  "files": ["dist", "README.md"],
  "scripts": {
    "build": "tsc -p tsconfig.build.json",
    "typecheck": "tsc -p tsconfig.json --noEmit",
    "test": "vitest run"
  },
  "dependencies": {},
  "devDependencies": {
    "@holdfast/tsconfig": "workspace:*",
    "@holdfast/vitest-config": "workspace:*"
  }
}
JSON
cat > "$p/tsconfig.json" <<JSON
{ "extends": "../../tooling/tsconfig/base.json", "compilerOptions": { "noEmit": true }, "include": ["src", "test"] }
JSON
cat > "$p/tsconfig.build.json" <<JSON
{ "extends": "../../tooling/tsconfig/build.json", "compilerOptions": { "rootDir": "src", "outDir": "dist" }, "include": ["src"] }
JSON
cat > "$p/vitest.config.ts" <<TS
import { holdfastProject } from "@holdfast/vitest-config";

export default holdfastProject();
TS
[ -f "$p/README.md" ] || printf '# %s\n\n%s\n' "$name" "$desc" > "$p/README.md"
[ -f "$p/src/index.ts" ] || echo "export {};" > "$p/src/index.ts"
echo "created $p"
