import path from 'node:path';
import ts from 'typescript';

// `npm run --silent lint:edges` (issue 26 item 4, CI: .ci/run): src/ uses other packages through their public
// surface only. With the TypeScript type checker it finds, in every file of src/:
//
//   private-field    an underscore property (`x._name`, `x['_name']`, `const { _name } = x`) that is
//                    - declared in another package (its declaration is in node_modules or a lib file), or
//                    - declared nowhere (`any`, an index signature), or
//                    - declared in a type literal of our own (`(x as { _idle: unknown[] })._idle`: a shape
//                      written to reach into someone else's object), or
//                    - read through a cast of an object whose type comes from another package.
//                    Our own underscore names are fine when declared in src/ as a class member or a named
//                    interface/type, and the object is not a cast of a foreign one.
//   method-replaced  an assignment to a property of another package's object whose declared type is a function
//                    (`res.end = …`, `pool.connect = …`, `client.query = …`, `schema.parse = …`), and any
//                    assignment to a property named end, write, writeHead, parse, safeParse, query or connect
//                    unless that property is declared in src/ as our own (not in a cast's type literal).
//                    Object.assign(target, { parse: … }) counts as such assignments.
//   foreign-define   Object.defineProperty/defineProperties on an object whose type comes from another package.
//
// Limits (a syntactic and type-level check, not a proof): a foreign object first stored in a variable typed with a
// named interface of our own (`const p = pool as unknown as PoolInternals; p._idle`) is not recognised as foreign;
// private fields without an underscore (pg's `parsedStatements`) and swapped configuration objects are not
// recognised as private; writes through `Reflect.set`, `Object.assign` with a source that is not an object literal,
// or a computed key held in a variable are not seen; a method patched
// inside another package (by a plugin we import) is not seen. Review still matters; the check keeps the known
// ways out.
//
// There is no allowlist: any finding fails (exit 1). The offenders issue 26 found are gone.

export type Rule = 'private-field' | 'method-replaced' | 'foreign-define';
export type Finding = { file: string; line: number; rule: Rule; name: string; why: string; text: string };

const WATCHED_NAMES = new Set(['end', 'write', 'writeHead', 'parse', 'safeParse', 'query', 'connect']);

/** Files of other packages: node_modules, TypeScript's lib files, any declaration file. */
function isForeignFile(program: ts.Program, sf: ts.SourceFile): boolean {
  return sf.isDeclarationFile || program.isSourceFileDefaultLibrary(sf) || program.isSourceFileFromExternalLibrary(sf) || /[\\/]node_modules[\\/]/.test(sf.fileName);
}

function unwrapCasts(e: ts.Expression): { inner: ts.Expression; casted: boolean } {
  let casted = false;
  for (;;) {
    if (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e)) e = e.expression;
    else if (ts.isAsExpression(e) || ts.isTypeAssertionExpression(e) || ts.isSatisfiesExpression(e)) {
      casted = true;
      e = e.expression;
    } else return { inner: e, casted };
  }
}

export function checkProgram(program: ts.Program, files: readonly ts.SourceFile[], root: string): Finding[] {
  const checker = program.getTypeChecker();
  const findings: Finding[] = [];

  const foreignDecl = (d: ts.Declaration) => isForeignFile(program, d.getSourceFile());
  /** Whether a type (or what it is an instance of) is declared by another package. */
  const typeIsForeign = (type: ts.Type): boolean => {
    if (type.isUnion() || type.isIntersection()) return type.types.some(typeIsForeign);
    const symbols = [type.getSymbol(), type.aliasSymbol].filter((s): s is ts.Symbol => !!s);
    return symbols.some((s) => (s.declarations ?? []).length > 0 && (s.declarations ?? []).every(foreignDecl));
  };
  const inTypeLiteral = (d: ts.Declaration) => ts.isTypeLiteralNode(d.parent);
  /** The property `name` of the object expression `obj`, with its declarations. */
  const propertyOf = (obj: ts.Expression, name: string, nameNode?: ts.Node): ts.Symbol | undefined =>
    (nameNode && checker.getSymbolAtLocation(nameNode)) || checker.getTypeAtLocation(obj).getProperty(name);
  const report = (node: ts.Node, rule: Rule, name: string, why: string) => {
    const sf = node.getSourceFile();
    const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
    findings.push({ file: path.relative(root, sf.fileName).split(path.sep).join('/'), line: line + 1, rule, name, why, text: node.getText(sf).replace(/\s+/g, ' ').slice(0, 120) });
  };

  /** Why reading `obj.name` reaches into another package's private field, or null. */
  const privateWhy = (obj: ts.Expression, name: string, nameNode?: ts.Node): string | null => {
    const decls = propertyOf(obj, name, nameNode)?.declarations ?? [];
    if (decls.length === 0) return 'declared nowhere (any or an index signature)';
    if (decls.some(foreignDecl)) return 'declared by another package';
    if (decls.some(inTypeLiteral)) return 'declared in a type literal written to reach into an object';
    const { inner, casted } = unwrapCasts(obj);
    if (casted && typeIsForeign(checker.getTypeAtLocation(inner))) return 'read through a cast of another package\'s object';
    return null;
  };

  /** Why assigning `obj.name = …` replaces another package's method, or null. */
  const replacedWhy = (obj: ts.Expression, name: string, nameNode?: ts.Node): string | null => {
    const prop = propertyOf(obj, name, nameNode);
    const decls = prop?.declarations ?? [];
    if (decls.some(foreignDecl)) {
      const type = checker.getTypeOfSymbolAtLocation(prop!, nameNode ?? obj);
      if (type.getCallSignatures().length > 0 || WATCHED_NAMES.has(name)) return 'a method of another package\'s object';
      return null;
    }
    if (!WATCHED_NAMES.has(name)) return null;
    if (decls.length === 0) return 'declared nowhere (any or an index signature)';
    if (decls.some(inTypeLiteral)) return 'declared in a type literal written to reach into an object';
    const { inner, casted } = unwrapCasts(obj);
    if (casted && typeIsForeign(checker.getTypeAtLocation(inner))) return 'through a cast of another package\'s object';
    return null;
  };

  const literalName = (e: ts.Expression): string | undefined =>
    ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) ? e.text : undefined;

  const visit = (node: ts.Node): void => {
    // Underscore reads and writes.
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.name) && node.name.text.length > 1 && node.name.text.startsWith('_')) {
      const why = privateWhy(node.expression, node.name.text, node.name);
      if (why) report(node, 'private-field', node.name.text, why);
    } else if (ts.isElementAccessExpression(node)) {
      const name = literalName(node.argumentExpression);
      if (name && name.length > 1 && name.startsWith('_')) {
        const why = privateWhy(node.expression, name, node.argumentExpression);
        if (why) report(node, 'private-field', name, why);
      }
    } else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
      const key = node.propertyName ?? node.name;
      const name = ts.isIdentifier(key) || ts.isStringLiteral(key) ? key.text : undefined;
      if (name && name.length > 1 && name.startsWith('_')) {
        const holder = checker.getTypeAtLocation(node.parent);
        const decls = holder.getProperty(name)?.declarations ?? [];
        const why = decls.length === 0 ? 'declared nowhere (any or an index signature)'
          : decls.some(foreignDecl) ? 'declared by another package'
          : decls.some(inTypeLiteral) ? 'declared in a type literal written to reach into an object' : null;
        if (why) report(node, 'private-field', name, why);
      }
    }
    // Assignments to properties: replaced methods.
    if (ts.isBinaryExpression(node) && node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && node.operatorToken.kind <= ts.SyntaxKind.LastAssignment) {
      const left = unwrapCasts(node.left).inner;
      if (ts.isPropertyAccessExpression(left) && ts.isIdentifier(left.name)) {
        const why = replacedWhy(left.expression, left.name.text, left.name);
        if (why) report(node, 'method-replaced', left.name.text, why);
      } else if (ts.isElementAccessExpression(left)) {
        const name = literalName(left.argumentExpression);
        const why = name ? replacedWhy(left.expression, name, left.argumentExpression) : null;
        if (name && why) report(node, 'method-replaced', name, why);
      }
    }
    // Object.defineProperty(foreign, …) / Object.defineProperties(foreign, …); Object.assign(x, { parse, … }).
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && ts.isIdentifier(node.expression.expression)
      && node.expression.expression.text === 'Object' && node.arguments[0]) {
      const target = node.arguments[0];
      const fn = node.expression.name.text;
      if ((fn === 'defineProperty' || fn === 'defineProperties') && typeIsForeign(checker.getTypeAtLocation(unwrapCasts(target).inner))) {
        const name = node.arguments[1] ? literalName(node.arguments[1]) ?? '?' : '?';
        report(node, 'foreign-define', name, 'defines a property on another package\'s object');
      }
      if (fn === 'assign') {
        for (const source of node.arguments.slice(1)) {
          if (!ts.isObjectLiteralExpression(source)) continue;
          for (const p of source.properties) {
            const key = p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? p.name.text : undefined;
            const why = key ? replacedWhy(target, key) : null;
            if (key && why) report(p, 'method-replaced', key, `${why}, by Object.assign`);
          }
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  for (const sf of files) visit(sf);
  return findings;
}

/** A program over `files` with the project's compiler options (tsconfig.json). */
export function checkFiles(files: string[], root = process.cwd()): Finding[] {
  const configPath = path.join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const program = ts.createProgram({ rootNames: files.map((f) => path.resolve(root, f)), options: { ...parsed.options, noEmit: true } });
  const wanted = new Set(files.map((f) => path.resolve(root, f)));
  return checkProgram(program, program.getSourceFiles().filter((sf) => wanted.has(path.resolve(sf.fileName))), root);
}

function sourceFiles(root: string): string[] {
  return ts.sys.readDirectory(path.join(root, 'src'), ['.ts'], ['**/*.d.ts'], undefined).map((f) => path.relative(root, f));
}

function main(): number {
  const root = process.cwd();
  const args = process.argv.slice(2);
  const files = args.length ? args : sourceFiles(root);
  const failing = checkFiles(files, root);
  for (const f of failing) console.error(`${f.file}:${f.line} ${f.rule} ${f.name}: ${f.why}: ${f.text}`);
  console.log(`${files.length} files: ${failing.length ? `${failing.length} edge violation(s) above` : 'no edge violation'}`);
  return failing.length ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main();
