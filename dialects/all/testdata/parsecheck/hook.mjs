// dt-sql-parser's ESM build imports directories ('./parser') and files
// without their extension, which Node's ESM resolver refuses
// (ERR_UNSUPPORTED_DIR_IMPORT, ERR_MODULE_NOT_FOUND). Retry the way a
// bundler would: the directory's index.js, then the name with .js.
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    if (!specifier.startsWith('.')) throw err;
    if (err.code === 'ERR_UNSUPPORTED_DIR_IMPORT') return next(specifier + '/index.js', context);
    if (err.code === 'ERR_MODULE_NOT_FOUND') return next(specifier + '.js', context);
    throw err;
  }
}
