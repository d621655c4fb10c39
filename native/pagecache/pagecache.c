// Page cache advice, which Node's fs does not offer.
//
// dropCache(fd, offset, length) asks the kernel to drop a file range's pages
// from the page cache (posix_fadvise POSIX_FADV_DONTNEED). Pages already on
// disk go at once; dirty ones are kept, so it is meant for ranges just flushed.
// A download of tens of GB otherwise fills the page cache with pages nobody
// reads again and evicts everything else; dropped pages are also the first to
// be reused by the next ranges (docs/agent-api-notes/downloads.md).
// Answers whether the advice was given: false where the platform has none
// (macOS, Windows) or the kernel refused it. Advice never changes file data.
//
// misalignment(bytes, align) answers the address of a Uint8Array's first byte
// modulo align: writes that bypass the page cache (O_DIRECT) need buffers on
// block boundaries, and JavaScript cannot see addresses
// (src/native/alignedBuffers.ts, src/objectstore/directSink.ts).
#include <node_api.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>

static napi_value fail(napi_env env, const char *msg) {
  napi_throw_type_error(env, NULL, msg);
  return NULL;
}

static napi_value drop_cache(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], result;
  int64_t fd, offset, length;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 3 || napi_get_value_int64(env, argv[0], &fd) != napi_ok || napi_get_value_int64(env, argv[1], &offset) != napi_ok ||
      napi_get_value_int64(env, argv[2], &length) != napi_ok)
    return fail(env, "dropCache(fd, offset, length): numbers expected");
  if (fd < 0 || fd > INT32_MAX || offset < 0 || length < 0) return fail(env, "dropCache(fd, offset, length): out of range");
  bool advised = false;
#ifdef POSIX_FADV_DONTNEED
  advised = posix_fadvise((int)fd, (off_t)offset, (off_t)length, POSIX_FADV_DONTNEED) == 0;
#endif
  napi_get_boolean(env, advised, &result);
  return result;
}

static napi_value misalignment(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], result;
  napi_typedarray_type type;
  size_t length, offset;
  void *data;
  int64_t align;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 2 || napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, &offset) != napi_ok ||
      type != napi_uint8_array || napi_get_value_int64(env, argv[1], &align) != napi_ok)
    return fail(env, "misalignment(bytes, align): a Uint8Array and a number expected");
  if (align <= 0 || align > (1 << 30)) return fail(env, "misalignment(bytes, align): align out of range");
  napi_create_int64(env, (int64_t)((uintptr_t)data % (uintptr_t)align), &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "dropCache", NAPI_AUTO_LENGTH, drop_cache, NULL, &fn);
  napi_set_named_property(env, exports, "dropCache", fn);
  napi_create_function(env, "misalignment", NAPI_AUTO_LENGTH, misalignment, NULL, &fn);
  napi_set_named_property(env, exports, "misalignment", fn);
  return exports;
}
