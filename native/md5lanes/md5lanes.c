// MD5 of many independent streams at once, one stream per SIMD lane.
//
// MD5 is a chain: each 64-byte block depends on the one before, so one stream
// runs at ~0.6 GB/s per core whatever the CPU. Ferry hashes every part it sends
// or stores (S3's ETag is the part's MD5), and with 8 parts in flight there are 8
// independent chains: AVX-512 advances 16 of them per instruction (~6 GB/s per
// core here), AVX2 and AVX-512VL 8 (~3.9 GB/s for 8 streams: each lane then runs
// at one stream's speed). Lanes that run out of data take the next stream, so
// streams of any length and any chunking share the lanes.
//
// The JS side owns each stream's state (an opaque 96-byte Uint8Array) and calls
// update() with the chunks of many streams; digest() pads and finishes one.
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint32_t s[4];
  uint32_t carry_len; // bytes in carry, always < 64 between calls
  uint64_t len;       // bytes fed so far
  uint8_t carry[64];
} md5_state;

#define STATE_BYTES 96
_Static_assert(sizeof(md5_state) == STATE_BYTES, "state layout");

static const uint32_t K[64] = {
  0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
  0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
  0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
  0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
  0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
  0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
  0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
  0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
static const int R[64] = {
  7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
  5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
  4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
  6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};
#define W(i) ((i) < 16 ? (i) : (i) < 32 ? (5 * (i) + 1) & 15 : (i) < 48 ? (3 * (i) + 5) & 15 : (7 * (i)) & 15)
#define ROTL(x, s) (((x) << (s)) | ((x) >> (32 - (s))))
#define F0(b, c, d) (((b) & (c)) | (~(b) & (d)))
#define F1(b, c, d) (((d) & (b)) | (~(d) & (c)))
#define F2(b, c, d) ((b) ^ (c) ^ (d))
#define F3(b, c, d) ((c) ^ ((b) | ~(d)))
// Of a step's sum, only F depends on the b just computed: a (the b of three steps
// back), K and M are added first, and PIN keeps the compiler from regrouping the
// sum (it put a + F first), so a step's chain is F, one add, the rotate and the
// add of b: 4 instructions instead of 5, ~12% faster in lanes (docs/benchmarks.md).
// PIN_REG names the register class of T: "+r" for the scalar code, "+v" for vectors.
#if defined(__GNUC__) || defined(__clang__)
#define PIN(x) __asm__("" : PIN_REG(x))
#else
#define PIN(x)
#endif
#define STEP(i, F) { T s_ = a + (K[i] + M[W(i)]); PIN(s_); T t_ = s_ + F(b, c, d); a = d; d = c; c = b; b = b + ROTL(t_, R[i]); }
// The 64 steps over a, b, c, d of type T with message words M[16]; the same text
// serves one scalar stream and every vector width.
#define ROUNDS                                                              \
  _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++) STEP(i, F0)         \
  _Pragma("GCC unroll 16") for (int i = 16; i < 32; i++) STEP(i, F1)        \
  _Pragma("GCC unroll 16") for (int i = 32; i < 48; i++) STEP(i, F2)        \
  _Pragma("GCC unroll 16") for (int i = 48; i < 64; i++) STEP(i, F3)

#define PIN_REG "+r"
static void md5_blocks_scalar(uint32_t s[4], const uint8_t *p, size_t n) {
  typedef uint32_t T;
  T a = s[0], b = s[1], c = s[2], d = s[3];
  for (; n > 0; n--, p += 64) {
    T M[16];
    for (int i = 0; i < 16; i++) M[i] = (T)p[4 * i] | (T)p[4 * i + 1] << 8 | (T)p[4 * i + 2] << 16 | (T)p[4 * i + 3] << 24;
    T aa = a, bb = b, cc = c, dd = d;
    ROUNDS
    a += aa; b += bb; c += cc; d += dd;
  }
  s[0] = a; s[1] = b; s[2] = c; s[3] = d;
}

#define MAX_LANES 16
// Lane states as four rows of MAX_LANES words; a kernel reads the first 8 or 16 of each row.
typedef uint32_t lane_rows[4][MAX_LANES];
typedef void (*lanes_kernel)(lane_rows st, const uint8_t *const ptr[MAX_LANES], unsigned mask, size_t n);

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_X86_LANES 1

static const uint8_t zero_block[64];

// A kernel's body: the lanes' states in, ROUNDS over each of n blocks, states out.
// WORDS(M, p) sets M[w] to the vector of message word w of every lane's block at
// p[lane]. Each lane's 64 bytes are loaded and transposed, which costs here ~30%
// less than gathering word by word; masked-off lanes read a zero block and their
// results are ignored.
#undef PIN_REG
#define PIN_REG "+v"
#define KERNEL_BODY(BYTES, LANES, WORDS)                                      \
  typedef uint32_t T __attribute__((vector_size(BYTES)));                     \
  const uint8_t *p[LANES];                                                    \
  size_t step[LANES];                                                         \
  for (int l = 0; l < LANES; l++) {                                           \
    int on = (mask >> l) & 1;                                                 \
    p[l] = on ? ptr[l] : zero_block;                                          \
    step[l] = on ? 64 : 0;                                                    \
  }                                                                           \
  T a, b, c, d;                                                               \
  memcpy(&a, st[0], BYTES); memcpy(&b, st[1], BYTES);                         \
  memcpy(&c, st[2], BYTES); memcpy(&d, st[3], BYTES);                         \
  for (size_t blk = 0; blk < n; blk++) {                                      \
    T M[16];                                                                  \
    WORDS(M, p);                                                              \
    for (int l = 0; l < LANES; l++) p[l] += step[l];                          \
    T aa = a, bb = b, cc = c, dd = d;                                         \
    ROUNDS                                                                    \
    a += aa; b += bb; c += cc; d += dd;                                       \
  }                                                                           \
  memcpy(st[0], &a, BYTES); memcpy(st[1], &b, BYTES);                         \
  memcpy(st[2], &c, BYTES); memcpy(st[3], &d, BYTES);

// The first two stages of a transpose of n rows r[] of W-bit vectors, t[] as
// scratch: dwords, then qwords of row pairs interleaved, so that 128-bit piece j
// of r[4g+k] holds dword 4j+k of rows 4g..4g+3.
#define INTERLEAVE(W, r, t, n)                                                                           \
  for (int i = 0; i < (n) / 2; i++) {                                                                    \
    t[2 * i] = _mm##W##_unpacklo_epi32(r[2 * i], r[2 * i + 1]);                                          \
    t[2 * i + 1] = _mm##W##_unpackhi_epi32(r[2 * i], r[2 * i + 1]);                                      \
  }                                                                                                      \
  for (int g = 0; g < (n) / 4; g++) {                                                                    \
    r[4 * g] = _mm##W##_unpacklo_epi64(t[4 * g], t[4 * g + 2]);                                          \
    r[4 * g + 1] = _mm##W##_unpackhi_epi64(t[4 * g], t[4 * g + 2]);                                      \
    r[4 * g + 2] = _mm##W##_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);                                  \
    r[4 * g + 3] = _mm##W##_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);                                  \
  }

// 16 lanes x 16 words: after INTERLEAVE, two rounds of 128-bit shuffles gather
// each word's four pieces.
#define WORDS16(M, p)                                                                                    \
  {                                                                                                      \
    __m512i r[16], t[16];                                                                                \
    for (int l = 0; l < 16; l++) r[l] = _mm512_loadu_si512((const void *)p[l]);                          \
    INTERLEAVE(512, r, t, 16);                                                                           \
    for (int k = 0; k < 4; k++) {                                                                        \
      t[k] = _mm512_shuffle_i32x4(r[k], r[4 + k], 0x88);       /* pieces 0, 2 of groups 0, 1 */          \
      t[k + 4] = _mm512_shuffle_i32x4(r[k], r[4 + k], 0xdd);   /* pieces 1, 3 */                         \
      t[k + 8] = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0x88);                                        \
      t[k + 12] = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0xdd);                                       \
    }                                                                                                    \
    for (int k = 0; k < 4; k++) {                                                                        \
      __m512i w0 = _mm512_shuffle_i32x4(t[k], t[k + 8], 0x88), w2 = _mm512_shuffle_i32x4(t[k], t[k + 8], 0xdd); \
      __m512i w1 = _mm512_shuffle_i32x4(t[k + 4], t[k + 12], 0x88), w3 = _mm512_shuffle_i32x4(t[k + 4], t[k + 12], 0xdd); \
      memcpy(&M[k], &w0, 64); memcpy(&M[4 + k], &w1, 64);                                               \
      memcpy(&M[8 + k], &w2, 64); memcpy(&M[12 + k], &w3, 64);                                           \
    }                                                                                                    \
  }

// 8 lanes x 16 words: two 8x8 transposes, of words 0-7 and of words 8-15; after
// INTERLEAVE, a word's two pieces are in r[k] and r[4 + k].
#define WORDS8(M, p)                                                                                     \
  for (int h = 0; h < 2; h++) {                                                                          \
    __m256i r[8], t[8];                                                                                  \
    for (int l = 0; l < 8; l++) r[l] = _mm256_loadu_si256((const void *)(p[l] + 32 * h));                \
    INTERLEAVE(256, r, t, 8);                                                                            \
    for (int k = 0; k < 4; k++) {                                                                        \
      __m256i lo = _mm256_permute2x128_si256(r[k], r[4 + k], 0x20), hi = _mm256_permute2x128_si256(r[k], r[4 + k], 0x31); \
      memcpy(&M[8 * h + k], &lo, 32); memcpy(&M[8 * h + 4 + k], &hi, 32);                                \
    }                                                                                                    \
  }

__attribute__((target("avx512f"))) static void md5_x16(lane_rows st, const uint8_t *const ptr[MAX_LANES], unsigned mask, size_t n) {
  KERNEL_BODY(64, 16, WORDS16)
}

// Eight lanes with AVX-512VL's rotate and three-input logic on 256-bit vectors:
// up to 8 streams (a transfer's parts in flight) cost ~30% less here than in 16
// lanes half empty.
__attribute__((target("avx512f,avx512vl"))) static void md5_x8_vl(lane_rows st, const uint8_t *const ptr[MAX_LANES], unsigned mask, size_t n) {
  KERNEL_BODY(32, 8, WORDS8)
}

__attribute__((target("avx2"))) static void md5_x8(lane_rows st, const uint8_t *const ptr[MAX_LANES], unsigned mask, size_t n) {
  KERNEL_BODY(32, 8, WORDS8)
}
#endif

// Steps of the 16-lane kernel, steps of the 8-lane kernel (each hashes a block in
// every busy lane), blocks hashed in busy lanes, and blocks hashed by the scalar code.
static uint64_t counted[4];
#define COUNT(i, n) __atomic_fetch_add(&counted[i], (uint64_t)(n), __ATOMIC_RELAXED)

static lanes_kernel kernel16, kernel8;
static unsigned lanes; // widest kernel: 16, 8, or 0 (no kernel: one stream at a time)
// Fewer active streams than this go through the scalar code: two lanes already
// take about half the time of two streams one after the other.
#define MIN_LANES 2

#ifdef HAVE_X86_LANES
// Once, when the library is loaded, before any thread (worker) can call in.
// FERRY_MD5_LANES=8 picks the AVX2 kernel on an AVX-512 CPU (to test it).
__attribute__((constructor)) static void pick_kernel(void) {
  __builtin_cpu_init();
  const char *want = getenv("FERRY_MD5_LANES");
  int avx2_only = want && strcmp(want, "8") == 0;
  int avx512 = __builtin_cpu_supports("avx512f") && !avx2_only;
  if (avx512) { kernel16 = md5_x16; lanes = 16; }
  if (avx512 && __builtin_cpu_supports("avx512vl")) kernel8 = md5_x8_vl;
  else if (__builtin_cpu_supports("avx2")) kernel8 = md5_x8;
  if (!lanes && kernel8) lanes = 8;
}
#endif

typedef struct {
  const uint8_t *p;
  size_t n;
} chunk;

typedef struct {
  md5_state st;
  uint8_t *out;            // the caller's state bytes, written back when done
  const chunk *chunks;     // its chunks, in order
  uint32_t nchunks, ci;    // chunk count, current chunk
  size_t off;              // bytes of the current chunk consumed
} stream;

// The run of whole blocks the stream can hash next: *ptr and the block count,
// or 0 when its bytes are used up (any tail is then in its carry).
static size_t next_run(stream *s, const uint8_t **ptr) {
  for (; s->ci < s->nchunks; s->ci++, s->off = 0) {
    const chunk *c = &s->chunks[s->ci];
    while (s->off < c->n) {
      if (s->st.carry_len == 0 && c->n - s->off >= 64) {
        *ptr = c->p + s->off;
        return (c->n - s->off) / 64;
      }
      size_t take = 64 - s->st.carry_len;
      if (take > c->n - s->off) take = c->n - s->off;
      memcpy(s->st.carry + s->st.carry_len, c->p + s->off, take);
      s->st.carry_len += (uint32_t)take;
      s->off += take;
      if (s->st.carry_len == 64) { *ptr = s->st.carry; return 1; }
    }
  }
  return 0;
}

static void consumed(stream *s, const uint8_t *ptr, size_t blocks) {
  if (ptr == s->st.carry) s->st.carry_len = 0;
  else s->off += blocks * 64;
}

static napi_value fail(napi_env env, const char *msg) {
  napi_throw_type_error(env, NULL, msg);
  return NULL;
}

static int state_bytes(napi_env env, napi_value v, uint8_t **out) {
  napi_typedarray_type type;
  size_t len;
  void *data;
  if (napi_get_typedarray_info(env, v, &type, &len, &data, NULL, NULL) != napi_ok) return 0;
  if (type != napi_uint8_array || len != STATE_BYTES) return 0;
  *out = data;
  return 1;
}

// Fills `streams` from the JS arguments, with their chunks listed in `*table`
// (the caller frees both); NULL when they are well formed, else what is wrong.
static const char *read_args(napi_env env, napi_value states, napi_value lists, uint32_t count, stream *streams, chunk **table) {
  uint32_t total = 0, n;
  napi_value list, v;
  for (uint32_t i = 0; i < count; i++) {
    if (napi_get_element(env, states, i, &v) != napi_ok || !state_bytes(env, v, &streams[i].out)) return "update: each state must be a 96-byte Uint8Array";
    memcpy(&streams[i].st, streams[i].out, STATE_BYTES);
    if (napi_get_element(env, lists, i, &list) != napi_ok || napi_get_array_length(env, list, &n) != napi_ok) return "update: chunks[i] must be an array";
    streams[i].nchunks = n;
    total += n;
  }
  chunk *c = *table = calloc(total ? total : 1, sizeof(chunk));
  if (!c) return "update: out of memory";
  for (uint32_t i = 0; i < count; i++) {
    napi_get_element(env, lists, i, &list);
    streams[i].chunks = c;
    for (uint32_t k = 0; k < streams[i].nchunks; k++, c++) {
      napi_typedarray_type type;
      void *data;
      if (napi_get_element(env, list, k, &v) != napi_ok || napi_get_typedarray_info(env, v, &type, &c->n, &data, NULL, NULL) != napi_ok || type != napi_uint8_array) return "update: every chunk must be a Uint8Array";
      c->p = data;
      streams[i].st.len += c->n;
    }
  }
  return NULL;
}

// update(states: Uint8Array[], chunks: Uint8Array[][]): feeds chunks[i], in order,
// to the stream whose state is states[i]. A state must appear only once.
static napi_value update(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  uint32_t count;
  if (argc < 2 || napi_get_array_length(env, argv[0], &count) != napi_ok) return fail(env, "update(states, chunks): states must be an array");
  stream *streams = calloc(count ? count : 1, sizeof(stream));
  chunk *table = NULL;
  const char *problem = streams ? read_args(env, argv[0], argv[1], count, streams, &table) : "update: out of memory";
  if (problem) {
    free(streams);
    free(table);
    return fail(env, problem);
  }

  // Each lane holds one stream until its bytes run out, then takes the next.
  stream *in[MAX_LANES] = {0};
  const uint8_t *ptr[MAX_LANES] = {0};
  size_t run[MAX_LANES] = {0};
  lane_rows st = {{0}};
  // Up to 8 streams go through the 8-lane kernel: 16 lanes half empty cost more.
  lanes_kernel kernel = count > 8 && kernel16 ? kernel16 : kernel8;
  unsigned width = !kernel ? 1 : kernel == kernel16 ? 16 : 8;
  uint32_t next = 0;
  for (;;) {
    unsigned mask = 0, active = 0;
    size_t common = 0;
    for (unsigned l = 0; l < width; l++) {
      while (in[l] || next < count) {
        if (!in[l]) {
          in[l] = &streams[next++];
          for (int r = 0; r < 4; r++) st[r][l] = in[l]->st.s[r];
        }
        run[l] = next_run(in[l], &ptr[l]);
        if (run[l] > 0) break;
        for (int r = 0; r < 4; r++) in[l]->st.s[r] = st[r][l];
        memcpy(in[l]->out, &in[l]->st, STATE_BYTES);
        in[l] = NULL;
      }
      if (in[l]) {
        mask |= 1u << l;
        active++;
        if (common == 0 || run[l] < common) common = run[l];
      }
    }
    if (active == 0) break;
    if (kernel && active >= MIN_LANES) {
      kernel(st, ptr, mask, common);
      COUNT(width == 16 ? 0 : 1, common);
      COUNT(2, (uint64_t)common * active);
      for (unsigned l = 0; l < width; l++) if (in[l]) consumed(in[l], ptr[l], common);
    } else {
      for (unsigned l = 0; l < width; l++) {
        if (!in[l]) continue;
        uint32_t s[4] = {st[0][l], st[1][l], st[2][l], st[3][l]};
        md5_blocks_scalar(s, ptr[l], run[l]);
        COUNT(3, run[l]);
        for (int r = 0; r < 4; r++) st[r][l] = s[r];
        consumed(in[l], ptr[l], run[l]);
      }
    }
  }
  free(streams);
  free(table);
  return NULL;
}

// stats(): [16-lane steps, 8-lane steps, blocks in busy lanes, scalar blocks], for this process so far.
static napi_value stats(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value arr, v;
  napi_create_array_with_length(env, 4, &arr);
  for (uint32_t i = 0; i < 4; i++) {
    napi_create_double(env, (double)__atomic_load_n(&counted[i], __ATOMIC_RELAXED), &v);
    napi_set_element(env, arr, i, v);
  }
  return arr;
}

// init(state): a fresh stream.
static napi_value init(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  uint8_t *out;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || !state_bytes(env, argv[0], &out)) return fail(env, "init(state): state must be a 96-byte Uint8Array");
  md5_state s = {{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}, 0, 0, {0}};
  memcpy(out, &s, STATE_BYTES);
  return NULL;
}

// digest(state): the stream's MD5 as a 16-byte Buffer; the state is spent.
static napi_value digest(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  uint8_t *out;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || !state_bytes(env, argv[0], &out)) return fail(env, "digest(state): state must be a 96-byte Uint8Array");
  md5_state s;
  memcpy(&s, out, STATE_BYTES);
  uint8_t pad[128] = {0};
  memcpy(pad, s.carry, s.carry_len);
  pad[s.carry_len] = 0x80;
  size_t total = s.carry_len + 9 <= 64 ? 64 : 128;
  uint64_t bits = s.len * 8;
  for (int i = 0; i < 8; i++) pad[total - 8 + i] = (uint8_t)(bits >> (8 * i));
  md5_blocks_scalar(s.s, pad, total / 64);
  void *data;
  napi_create_buffer(env, 16, &data, &result);
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 4; k++) ((uint8_t *)data)[4 * i + k] = (uint8_t)(s.s[i] >> (8 * k));
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn, num;
  napi_create_function(env, "update", NAPI_AUTO_LENGTH, update, NULL, &fn);
  napi_set_named_property(env, exports, "update", fn);
  napi_create_function(env, "init", NAPI_AUTO_LENGTH, init, NULL, &fn);
  napi_set_named_property(env, exports, "init", fn);
  napi_create_function(env, "digest", NAPI_AUTO_LENGTH, digest, NULL, &fn);
  napi_set_named_property(env, exports, "digest", fn);
  napi_create_function(env, "stats", NAPI_AUTO_LENGTH, stats, NULL, &fn);
  napi_set_named_property(env, exports, "stats", fn);
  napi_create_uint32(env, lanes, &num);
  napi_set_named_property(env, exports, "lanes", num);
  napi_create_uint32(env, STATE_BYTES, &num);
  napi_set_named_property(env, exports, "stateBytes", num);
  return exports;
}
