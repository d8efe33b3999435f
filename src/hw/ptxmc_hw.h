// ptxmc hardware harness: the runtime shared by every generated test.
// Written by `ptxmc hw gen`; do not edit. Needs only the CUDA toolkit
// (runtime + driver API, C++17). See docs/hardware.md in the ptxmc sources.
//
// A test is a `ptxmc::TestDesc` (tables written by the generator) plus one
// kernel. One launch runs `ngroups * 32` instances of the test: each warp is
// one litmus thread of 32 instances (its lanes, in a permuted order), and the
// blocks of one instance group are the test's CTAs (or clusters), placed at
// permuted positions of the grid. Every launch draws a new memory layout.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#define PTXMC_CUDA(x)                                                              \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                  \
              cudaGetErrorString(e_));                                             \
      exit(3);                                                                     \
    }                                                                              \
  } while (0)

#define PTXMC_CU(x)                                                                \
  do {                                                                             \
    CUresult e_ = (x);                                                             \
    if (e_ != CUDA_SUCCESS) {                                                      \
      const char* s_ = nullptr;                                                    \
      cuGetErrorString(e_, &s_);                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      exit(3);                                                                     \
    }                                                                              \
  } while (0)

// The constant bank that holds constant-proxy locations. Device code reads it
// with ld.const; the generic (global) alias from cudaGetSymbolAddress is how
// the tests' generic accesses reach the same words.
__constant__ unsigned ptxmc_cbank[8192];

// The shared harness's window: per instance of the block, one 16-byte cell per
// shared location or mbarrier of the test, at positions drawn per launch.
extern __shared__ __align__(128) unsigned char ptxmc_smem[];

namespace ptxmc {

constexpr unsigned CONST_WORDS = 8192;
constexpr unsigned SPIN_LIMIT = 1u << 20;   // backward branches per thread, then "timeout"
constexpr unsigned START_LIMIT = 1u << 16;  // polls of a group's start counter
constexpr unsigned STRESS_WARPS = 2;        // extra warps per block for the stress configuration
constexpr unsigned STRESS_ITERS = 1024;     // load/store pairs per stress thread
constexpr unsigned SCRATCH_WORDS = 1u << 20;
constexpr unsigned MAIN_CAP_WORDS = 1u << 24;  // 64 MiB for the main region
constexpr int MAX_LOCS = 16;
constexpr int MAX_MAPS = 4;
constexpr int NCONFIGS = 4;
constexpr unsigned CELL_BYTES = 16;                 // one shared (or global) cell
constexpr unsigned SHARED_WINDOW_MAX = 48u * 1024u;  // dynamic shared memory per block
static const char* const CONFIG_NAMES[NCONFIGS] = {"plain", "barrier-start", "stress",
                                                   "barrier-start+stress"};

// Per-launch parameters (passed by value to every kernel, as a __grid_constant__
// so that helpers can take it by reference without a local copy).
struct Launch {
  unsigned ngroups;          // instance groups of 32 instances
  unsigned ninst;            // ngroups * 32
  unsigned nunits;           // blocks (or clusters) that are permuted
  unsigned unit_a, unit_c;   // unit u plays slot (a*u + c) % nunits
  unsigned inst_a, inst_c;   // instance i sits at position (a*i + c) % ninst
  unsigned rank_rot;         // rotation of the CTA ranks inside a cluster
  unsigned lane_seed;        // lane permutations
  unsigned barrier_start;    // spin until every warp of the group has arrived
  unsigned stress;           // extra warps hammer scratch memory
  unsigned nreg[2];          // locations per region (0 = main, 1 = constant)
  unsigned stride[2], offset[2], mode[2];
  unsigned lperm[2][MAX_LOCS];
  unsigned nloc;             // all locations
  unsigned loc_region[MAX_LOCS], loc_rank[MAX_LOCS];
  int loc_init[MAX_LOCS];
  unsigned* map[MAX_MAPS];   // the main region, once per virtual mapping
  unsigned* cglobal;         // the constant bank's global alias
  unsigned* res;             // per instance: every thread's registers, sink, status
  unsigned* final_locs;      // per instance: every location's final value
  unsigned* start;           // per group: arrival counter
  unsigned* scratch;         // stress lines
  // The shared harness: cells per instance, and this launch's cell layout.
  unsigned ncells;
  unsigned sh_stride, sh_offset, sh_mode;  // in cells
  unsigned sh_a, sh_c;                     // local instance i sits at (a*i + c) % 32
  unsigned sh_perm[MAX_LOCS];              // cell rank -> position among an instance's cells
};

__host__ __device__ inline unsigned hash3(unsigned a, unsigned b, unsigned c) {
  unsigned h = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA77u ^ (c + 0x165667B1u) * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h;
}

// The word index of location rank `rank` of region `region` for instance `inst`.
__host__ __device__ inline unsigned word_of(const Launch& L, unsigned region, unsigned inst,
                                            unsigned rank) {
  unsigned pos = (unsigned)(((unsigned long long)L.inst_a * inst + L.inst_c) % L.ninst);
  unsigned l = L.lperm[region][rank];
  unsigned idx = L.mode[region] ? (l * L.ninst + pos) : (pos * L.nreg[region] + l);
  return L.offset[region] + idx * L.stride[region];
}

// Global-window address of a main-region location through mapping `map`.
__device__ inline unsigned long long main_addr(const Launch& L, unsigned map, unsigned inst,
                                               unsigned rank) {
  return (unsigned long long)__cvta_generic_to_global(L.map[map] + word_of(L, 0, inst, rank));
}

// Global-window address of a constant-bank location (its generic alias).
__device__ inline unsigned long long const_global_addr(const Launch& L, unsigned inst,
                                                       unsigned rank) {
  return (unsigned long long)__cvta_generic_to_global(L.cglobal + word_of(L, 1, inst, rank));
}

// Constant-window address of a constant-bank location (for ld.const).
__device__ inline unsigned long long const_space_addr(const Launch& L, unsigned inst,
                                                      unsigned rank) {
  unsigned long long g = (unsigned long long)(&ptxmc_cbank[word_of(L, 1, inst, rank)]);
  unsigned long long c;
  asm("cvta.to.const.u64 %0, %1;" : "=l"(c) : "l"(g));
  return c;
}

// Which instance of group `group` lane `lane` of litmus thread `t` plays:
// an odd multiplier and an offset make a different permutation per group and thread.
__device__ inline unsigned lane_instance(const Launch& L, unsigned group, unsigned t,
                                         unsigned lane) {
  unsigned h = hash3(L.lane_seed, group, t);
  return group * 32u + (((2u * h + 1u) * lane + (h >> 8)) & 31u);
}

// Every warp of the group signals, then polls (bounded) until all have.
__device__ inline void start_barrier(const Launch& L, unsigned group, unsigned nwarps) {
  unsigned long long c = (unsigned long long)__cvta_generic_to_global(L.start + group);
  if ((threadIdx.x & 31u) == 0) {
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(c), "r"(1u) : "memory");
  }
  unsigned v = 0, n = 0;
  do {
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(c) : "memory");
  } while (v < nwarps && ++n < START_LIMIT);
  __syncwarp();
}

// The stress warps: loads and stores on pseudo-random scratch lines.
__device__ inline void stress(const Launch& L) {
  unsigned h = hash3(L.lane_seed, blockIdx.x, threadIdx.x);
  for (unsigned i = 0; i < STRESS_ITERS; ++i) {
    unsigned w = (hash3(h, i, 7u) % (SCRATCH_WORDS / 32u)) * 32u + (threadIdx.x & 31u);
    unsigned long long p = (unsigned long long)__cvta_generic_to_global(L.scratch + w);
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v + 1u) : "memory");
  }
}

// ---- The shared harness (docs/hardware.md) ----

// Byte offset in the window of cell `rank` of local instance `li` (0..31).
__device__ inline unsigned cell_offset(const Launch& L, unsigned rank, unsigned li) {
  unsigned pos = (L.sh_a * li + L.sh_c) & 31u;
  unsigned l = L.sh_perm[rank];
  unsigned idx = L.sh_mode ? (l * 32u + pos) : (pos * L.ncells + l);
  return (L.sh_offset + idx * L.sh_stride) * CELL_BYTES;
}

// The .shared::cta address of a cell of this block.
__device__ inline unsigned smem_cta(const Launch& L, unsigned rank, unsigned li) {
  return (unsigned)__cvta_generic_to_shared(ptxmc_smem + cell_offset(L, rank, li));
}

// The generic address of a cell of this block.
__device__ inline unsigned long long smem_generic(const Launch& L, unsigned rank, unsigned li) {
  return (unsigned long long)(ptxmc_smem + cell_offset(L, rank, li));
}

// The .shared::cluster address of the same cell in the block of cluster rank `cta_rank`
// (every block lays its window out alike).
__device__ inline unsigned smem_cluster(const Launch& L, unsigned rank, unsigned li,
                                        unsigned cta_rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_cta(L, rank, li)),
               "r"(cta_rank));
  return r;
}

// A shared data cell: the location's initial value, then three padding words
// (a bulk copy moves the whole cell; nobody observes the padding).
__device__ inline void init_word(const Launch& L, unsigned rank, unsigned li, unsigned v) {
  *(uint4*)(ptxmc_smem + cell_offset(L, rank, li)) = make_uint4(v, 0u, 0u, 0u);
}

// An mbarrier that the test initialises itself: zero before the test.
__device__ inline void clear_cell(const Launch& L, unsigned rank, unsigned li) {
  *(uint4*)(ptxmc_smem + cell_offset(L, rank, li)) = make_uint4(0u, 0u, 0u, 0u);
}

// An mbarrier initialised before the test (`bar @ mbarrier cta N = COUNT`).
__device__ inline void init_mbarrier(const Launch& L, unsigned rank, unsigned li, unsigned count) {
  *(uint2*)(ptxmc_smem + cell_offset(L, rank, li) + 8) = make_uint2(0u, 0u);
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_cta(L, rank, li)), "r"(count)
               : "memory");
}

// The initial cells are the test's initial state: visible to the async proxy
// (copies read and complete on them) and, with clusters, the mbarrier
// initialisations to the other CTAs, before the barrier that starts the test.
__device__ inline void publish_shared_init(bool cluster) {
  if (cluster) asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Every thread of the cluster (non-aligned: warps may have diverged).
__device__ inline void sync_cluster() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

// After a litmus thread's code: its own cp.async and bulk copies complete
// (they are the thread's; its registers are already recorded).
__device__ inline void complete_cp_async() { asm volatile("cp.async.wait_all;" ::: "memory"); }
__device__ inline void complete_bulk_groups() {
  asm volatile("cp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 0;" ::: "memory");
}

// After the test: add the arrivals and bytes that make the barrier's first
// phase complete exactly when every asynchronous operation completing on it
// has landed, then wait for that phase (bounded). 1: done; 0: gave up.
__device__ inline unsigned drain(const Launch& L, unsigned rank, unsigned li, unsigned expect,
                                 unsigned arrivals) {
  const unsigned a = smem_cta(L, rank, li);
  if (expect)
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(expect)
                 : "memory");
  if (arrivals)
    asm volatile("mbarrier.arrive.relaxed.cta.shared::cta.b64 _, [%0], %1;" ::"r"(a), "r"(arrivals)
                 : "memory");
  unsigned done = 0, n = 0;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(a)
        : "memory");
  } while (!done && ++n < SPIN_LIMIT);
  return done;
}

// The final value of a shared location (after the drains).
__device__ inline void gather(const Launch& L, unsigned rank, unsigned li, unsigned inst,
                              unsigned loc) {
  L.final_locs[(size_t)inst * L.nloc + loc] =
      *(const volatile unsigned*)(ptxmc_smem + cell_offset(L, rank, li));
}

// Before the block's shared memory is reused by another block.
__device__ inline void inval_mbarrier(const Launch& L, unsigned rank, unsigned li) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_cta(L, rank, li)) : "memory");
}

// A warp that plays no litmus thread: the stress loop (stress warps, in the
// stress configurations) and the test's barrier.cluster phases of its cluster.
__device__ inline void idle(const Launch& L, bool stress_warp, unsigned phases) {
  const bool hammer = stress_warp && L.stress;
  if (phases == 0 && hammer) stress(L);
  for (unsigned k = 0; k < phases; ++k) {
    asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
    if (k == 0 && hammer) stress(L);
    asm volatile("barrier.cluster.wait;" ::: "memory");
  }
}

// A thread's results: four words in one 128-bit store (the SASS check skips
// 128-bit accesses: litmus accesses are 32-bit).
__device__ inline void store4(unsigned* p, unsigned a, unsigned b, unsigned c, unsigned d) {
  unsigned long long g = (unsigned long long)__cvta_generic_to_global(p);
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(g), "r"(a), "r"(b), "r"(c),
               "r"(d)
               : "memory");
}

// Writes the initial value of every main-region location (one thread per instance).
__global__ void init_kernel(const __grid_constant__ Launch L) {
  unsigned inst = blockIdx.x * blockDim.x + threadIdx.x;
  if (inst >= L.ninst) return;
  for (unsigned l = 0; l < L.nloc; ++l) {
    if (L.loc_region[l] == 0) L.map[0][word_of(L, 0, inst, L.loc_rank[l])] = (unsigned)L.loc_init[l];
  }
}

// Reads the final value of every location (one thread per instance).
__global__ void gather_kernel(const __grid_constant__ Launch L) {
  unsigned inst = blockIdx.x * blockDim.x + threadIdx.x;
  if (inst >= L.ninst) return;
  for (unsigned l = 0; l < L.nloc; ++l) {
    if (L.loc_region[l] > 1) continue;  // shared locations: gathered by the test kernel
    const unsigned* base = L.loc_region[l] == 0 ? L.map[0] : L.cglobal;
    L.final_locs[inst * L.nloc + l] =
        *(const volatile unsigned*)(base + word_of(L, L.loc_region[l], inst, L.loc_rank[l]));
  }
}

using Kernel = void (*)(Launch);

// What the generator writes for one test.
struct TestDesc {
  const char* id;        // t0007: names the kernel and role functions
  const char* name;      // the litmus test's name
  const char* path;      // the litmus file (path[row] for template rows)
  const char* bundle;    // the bundle binary that holds it
  Kernel kernel;
  unsigned warps;        // warps per block that play litmus threads
  unsigned nthreads;     // litmus threads
  unsigned units_per_group;  // blocks per group, or clusters per group with a cluster launch
  unsigned cluster_dim;  // 0: no cluster launch
  unsigned nloc;
  const unsigned* loc_region;
  const unsigned* loc_rank;
  const int* loc_init;
  unsigned nreg[2];
  unsigned maps;
  unsigned res_stride;   // words per instance
  const unsigned* status_word;  // per thread: its status word in an instance's results
  unsigned max_instances;
  unsigned ncols;
  const char* const* col_names;
  const int* col_source;  // >= 0: result word; < 0: location -1 - col_source
  // The shared harness (left out, i.e. zero, for global-memory tests):
  unsigned nstatus;       // status words (threads, then CTA roles); 0: one per thread
  unsigned ncells;        // shared cells per instance
  unsigned global_cells;  // every global location has a 16-byte cell (bulk copies)
};

struct Options {
  std::string out = "results";
  double seconds = 1.0;
  unsigned long long max_launches = 0;  // 0: no limit
  unsigned long long seed = 1;
  std::string only;
  bool resume = false;
};

inline Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "missing value after %s\n", a.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--out") o.out = next();
    else if (a == "--seconds") o.seconds = atof(next().c_str());
    else if (a == "--launches") o.max_launches = strtoull(next().c_str(), nullptr, 10);
    else if (a == "--seed") o.seed = strtoull(next().c_str(), nullptr, 10);
    else if (a == "--only") o.only = next();
    else if (a == "--resume") o.resume = true;
    else {
      fprintf(stderr,
              "usage: %s [--out DIR] [--seconds S] [--launches N] [--seed N] [--only ID] "
              "[--resume]\n",
              argv[0]);
      exit(2);
    }
  }
  return o;
}

struct Rng {
  unsigned long long s;
  explicit Rng(unsigned long long seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  unsigned next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return (unsigned)(s >> 16);
  }
  unsigned below(unsigned n) { return n ? next() % n : 0; }
};

inline unsigned gcd(unsigned a, unsigned b) {
  while (b) {
    unsigned t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// A random multiplier coprime with n (so that x -> a*x + c mod n is a permutation).
inline unsigned coprime(Rng& r, unsigned n) {
  if (n <= 1) return 1;
  for (;;) {
    unsigned a = 1 + r.below(n);
    if (gcd(a, n) == 1) return a;
  }
}

inline std::string json_str(const char* s) {
  std::string o = "\"";
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      o += '\\';
      o += (char)c;
    } else if (c < 0x20) {
      char b[8];
      snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += (char)c;
    }
  }
  return o + "\"";
}

inline bool file_exists(const std::string& p) {
  FILE* f = fopen(p.c_str(), "r");
  if (f) fclose(f);
  return f != nullptr;
}

// The main region: one allocation, mapped `maps` times through the driver's
// virtual-memory API when the test has virtual aliases.
struct MainRegion {
  std::vector<unsigned*> va;
  size_t bytes = 0;
  CUmemGenericAllocationHandle handle = 0;
  bool vm = false;

  void create(size_t want, unsigned maps) {
    if (maps <= 1) {
      bytes = want;
      unsigned* p = nullptr;
      PTXMC_CUDA(cudaMalloc(&p, bytes));
      va.push_back(p);
      return;
    }
    vm = true;
    int dev = 0;
    PTXMC_CUDA(cudaGetDevice(&dev));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gran = 0;
    PTXMC_CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    bytes = (want + gran - 1) / gran * gran;
    PTXMC_CU(cuMemCreate(&handle, bytes, &prop, 0));
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (unsigned m = 0; m < maps; ++m) {
      CUdeviceptr p = 0;
      PTXMC_CU(cuMemAddressReserve(&p, bytes, 0, 0, 0));
      PTXMC_CU(cuMemMap(p, bytes, 0, handle, 0));
      PTXMC_CU(cuMemSetAccess(p, bytes, &access, 1));
      va.push_back((unsigned*)p);
    }
  }

  void destroy() {
    if (!vm) {
      for (unsigned* p : va) PTXMC_CUDA(cudaFree(p));
    } else {
      for (unsigned* p : va) {
        PTXMC_CU(cuMemUnmap((CUdeviceptr)p, bytes));
        PTXMC_CU(cuMemAddressFree((CUdeviceptr)p, bytes));
      }
      PTXMC_CU(cuMemRelease(handle));
    }
    va.clear();
  }
};

// Runs one test for the time budget and writes OUT/<id>.json.
inline void run_test(const TestDesc& T, const Options& o) {
  const std::string json_path = o.out + "/" + T.id + ".json";
  const std::string started = o.out + "/" + T.id + ".started";
  if (o.resume && file_exists(json_path)) return;
  if (o.resume && file_exists(started)) {
    // A previous run died in this test: record it and move on.
    std::string failed = o.out + "/" + T.id + ".failed";
    rename(started.c_str(), failed.c_str());
    fprintf(stderr, "%s: %s crashed in an earlier run; skipped (see %s)\n", T.id, T.path,
            failed.c_str());
    return;
  }
  if (FILE* f = fopen(started.c_str(), "w")) fclose(f);

  int dev = 0;
  PTXMC_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  PTXMC_CUDA(cudaGetDeviceProperties(&prop, dev));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);

  const unsigned block = 32u * (T.warps + STRESS_WARPS);
  const unsigned nstatus = T.nstatus ? T.nstatus : T.nthreads;
  // The shared harness's window: room for the widest cell stride that fits.
  static const unsigned SH_STRIDES[] = {1, 2, 3, 4, 8};
  std::vector<unsigned> sh_strides;
  for (unsigned s : SH_STRIDES)
    if (T.ncells && (8u + 32u * T.ncells * s) * CELL_BYTES <= SHARED_WINDOW_MAX) sh_strides.push_back(s);
  if (T.ncells && sh_strides.empty()) {
    fprintf(stderr, "%s: %s: the shared cells do not fit in a block\n", T.id, T.path);
    exit(3);
  }
  const size_t smem = T.ncells ? (8u + 32u * T.ncells * sh_strides.back()) * CELL_BYTES : 0;
  cudaLaunchConfig_t cfg = {};
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1] = {};
  cfg.blockDim = dim3(block, 1, 1);
  // Size the grid so that every block is resident at once (the start barrier
  // and cross-CTA spin loops need their partners running).
  unsigned ngroups = 0;
  if (T.cluster_dim) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = T.cluster_dim;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    cfg.gridDim = dim3(T.cluster_dim * T.units_per_group, 1, 1);
    int nclusters = 0;
    PTXMC_CUDA(cudaOccupancyMaxActiveClusters(&nclusters, T.kernel, &cfg));
    ngroups = (unsigned)nclusters / T.units_per_group;
  } else {
    int per_sm = 0;
    PTXMC_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, T.kernel, block, smem));
    ngroups = (unsigned)(per_sm * prop.multiProcessorCount) / T.units_per_group;
  }
  if (ngroups * 32u > T.max_instances) ngroups = T.max_instances / 32u;
  if (ngroups == 0) {
    fprintf(stderr, "%s: %s: the GPU cannot hold one instance group\n", T.id, T.path);
    exit(3);
  }
  const unsigned ninst = ngroups * 32u;
  const unsigned nunits = ngroups * T.units_per_group;
  cfg.gridDim = dim3(nunits * (T.cluster_dim ? T.cluster_dim : 1u), 1, 1);

  // Strides that fit: the main region holds at most MAIN_CAP_WORDS words.
  // With global cells (bulk copies move 16 bytes) a location's word starts a
  // 16-byte cell of its own: strides and offsets are multiples of 4 words.
  static const unsigned STRIDES[] = {1, 2, 3, 4, 8, 16, 32, 64};
  std::vector<unsigned> main_strides, const_strides;
  for (unsigned s : STRIDES) {
    if (T.global_cells && s % 4u != 0) continue;
    if ((unsigned long long)ninst * (T.nreg[0] ? T.nreg[0] : 1) * s + 64 <= MAIN_CAP_WORDS)
      main_strides.push_back(s);
    if ((unsigned long long)ninst * T.nreg[1] * s <= CONST_WORDS) const_strides.push_back(s);
  }
  if (main_strides.empty() || (T.nreg[1] && const_strides.empty())) {
    fprintf(stderr, "%s: %s: no memory layout fits\n", T.id, T.path);
    exit(3);
  }
  const size_t main_words =
      (size_t)ninst * (T.nreg[0] ? T.nreg[0] : 1) * main_strides.back() + 64;

  MainRegion mainr;
  mainr.create(main_words * sizeof(unsigned), T.maps);
  Launch L;
  memset(&L, 0, sizeof L);
  for (unsigned m = 0; m < T.maps; ++m) L.map[m] = mainr.va[m];
  for (unsigned m = T.maps; m < (unsigned)MAX_MAPS; ++m) L.map[m] = mainr.va[0];
  PTXMC_CUDA(cudaGetSymbolAddress((void**)&L.cglobal, ptxmc_cbank));
  const size_t res_words = (size_t)ninst * T.res_stride;
  PTXMC_CUDA(cudaMalloc(&L.res, res_words * sizeof(unsigned)));
  PTXMC_CUDA(cudaMalloc(&L.final_locs, (size_t)ninst * (T.nloc ? T.nloc : 1) * sizeof(unsigned)));
  PTXMC_CUDA(cudaMalloc(&L.start, ngroups * sizeof(unsigned)));
  PTXMC_CUDA(cudaMalloc(&L.scratch, SCRATCH_WORDS * sizeof(unsigned)));
  PTXMC_CUDA(cudaMemset(L.scratch, 0, SCRATCH_WORDS * sizeof(unsigned)));
  L.ngroups = ngroups;
  L.ninst = ninst;
  L.nunits = nunits;
  L.nloc = T.nloc;
  for (unsigned l = 0; l < T.nloc; ++l) {
    L.loc_region[l] = T.loc_region[l];
    L.loc_rank[l] = T.loc_rank[l];
    L.loc_init[l] = T.loc_init[l];
  }
  L.nreg[0] = T.nreg[0];
  L.nreg[1] = T.nreg[1];

  std::vector<unsigned> res(res_words), locs((size_t)ninst * (T.nloc ? T.nloc : 1));
  std::vector<unsigned> cimage(CONST_WORDS, 0);
  std::map<std::vector<int>, std::array<unsigned long long, NCONFIGS>> hist;
  unsigned long long launches[NCONFIGS] = {0, 0, 0, 0}, runs[NCONFIGS] = {0, 0, 0, 0};
  unsigned long long timeouts[NCONFIGS] = {0, 0, 0, 0};
  Rng rng(o.seed ^ ((unsigned long long)hash3(T.id[1], T.id[2] * 131u + T.id[3], T.id[4]) << 20));
  std::vector<int> row(T.ncols);
  const auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0;
  unsigned long long k = 0;
  for (;; ++k) {
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (k > 0 && elapsed >= o.seconds) break;
    if (o.max_launches && k >= o.max_launches) break;
    const int c = (int)(k % NCONFIGS);
    L.barrier_start = (c & 1) ? 1u : 0u;
    L.stress = (c & 2) ? 1u : 0u;
    L.unit_a = coprime(rng, nunits);
    L.unit_c = rng.below(nunits);
    L.inst_a = coprime(rng, ninst);
    L.inst_c = rng.below(ninst);
    L.rank_rot = rng.below(T.cluster_dim ? T.cluster_dim : 1u);
    L.lane_seed = rng.next();
    for (int g = 0; g < 2; ++g) {
      const std::vector<unsigned>& ss = g == 0 ? main_strides : const_strides;
      L.stride[g] = ss.empty() ? 1u : ss[rng.below((unsigned)ss.size())];
      L.mode[g] = rng.below(2);
      unsigned room = 0;
      if (g == 0) room = 64;
      else if (T.nreg[1]) room = CONST_WORDS - ninst * T.nreg[1] * L.stride[1];
      L.offset[g] = rng.below(room < 64 ? room + 1 : 64);
      if (g == 0 && T.global_cells) L.offset[g] &= ~3u;
      for (unsigned l = 0; l < (unsigned)MAX_LOCS; ++l) L.lperm[g][l] = l;
      for (unsigned l = T.nreg[g]; l > 1; --l) {
        unsigned j = rng.below(l);
        unsigned t = L.lperm[g][l - 1];
        L.lperm[g][l - 1] = L.lperm[g][j];
        L.lperm[g][j] = t;
      }
    }
    if (T.ncells) {
      L.ncells = T.ncells;
      L.sh_stride = sh_strides[rng.below((unsigned)sh_strides.size())];
      L.sh_offset = rng.below(8);
      L.sh_mode = rng.below(2);
      L.sh_a = 2u * rng.below(16) + 1u;
      L.sh_c = rng.below(32);
      for (unsigned l = 0; l < (unsigned)MAX_LOCS; ++l) L.sh_perm[l] = l;
      for (unsigned l = T.ncells; l > 1; --l) {
        unsigned j = rng.below(l);
        unsigned t = L.sh_perm[l - 1];
        L.sh_perm[l - 1] = L.sh_perm[j];
        L.sh_perm[j] = t;
      }
    }
    // Initial values: the constant bank through the runtime (which keeps the
    // constant caches coherent between launches), the main region by a kernel.
    if (T.nreg[1]) {
      for (unsigned inst = 0; inst < ninst; ++inst)
        for (unsigned l = 0; l < T.nloc; ++l)
          if (T.loc_region[l] == 1) cimage[word_of(L, 1, inst, T.loc_rank[l])] = (unsigned)T.loc_init[l];
      PTXMC_CUDA(cudaMemcpyToSymbol(ptxmc_cbank, cimage.data(), CONST_WORDS * sizeof(unsigned)));
    }
    PTXMC_CUDA(cudaMemset(L.res, 0, res_words * sizeof(unsigned)));
    PTXMC_CUDA(cudaMemset(L.start, 0, ngroups * sizeof(unsigned)));
    init_kernel<<<(ninst + 255) / 256, 256>>>(L);
    PTXMC_CUDA(cudaGetLastError());
    PTXMC_CUDA(cudaLaunchKernelEx(&cfg, T.kernel, L));
    gather_kernel<<<(ninst + 255) / 256, 256>>>(L);
    PTXMC_CUDA(cudaGetLastError());
    PTXMC_CUDA(cudaDeviceSynchronize());
    PTXMC_CUDA(cudaMemcpy(res.data(), L.res, res_words * sizeof(unsigned), cudaMemcpyDeviceToHost));
    if (T.nloc)
      PTXMC_CUDA(cudaMemcpy(locs.data(), L.final_locs, (size_t)ninst * T.nloc * sizeof(unsigned),
                            cudaMemcpyDeviceToHost));
    launches[c]++;
    for (unsigned inst = 0; inst < ninst; ++inst) {
      const unsigned* r = res.data() + (size_t)inst * T.res_stride;
      bool timed_out = false;
      for (unsigned t = 0; t < nstatus; ++t) timed_out |= r[T.status_word[t]] != 1u;
      if (timed_out) {
        timeouts[c]++;
        continue;
      }
      for (unsigned j = 0; j < T.ncols; ++j) {
        int s = T.col_source[j];
        row[j] = s >= 0 ? (int)r[s] : (int)locs[(size_t)inst * T.nloc + (unsigned)(-1 - s)];
      }
      auto it = hist.find(row);
      if (it == hist.end()) it = hist.emplace(row, std::array<unsigned long long, NCONFIGS>{}).first;
      it->second[c]++;
      runs[c]++;
    }
  }
  elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  FILE* f = fopen(json_path.c_str(), "w");
  if (!f) {
    fprintf(stderr, "%s: cannot write %s\n", T.id, json_path.c_str());
    exit(3);
  }
  unsigned long long total = 0, total_to = 0;
  for (int c = 0; c < NCONFIGS; ++c) {
    total += runs[c];
    total_to += timeouts[c];
  }
  fprintf(f, "{\n  \"schema\": \"ptxmc-hw-histogram/1\",\n");
  fprintf(f, "  \"id\": %s,\n  \"test\": %s,\n  \"name\": %s,\n  \"bundle\": %s,\n",
          json_str(T.id).c_str(), json_str(T.path).c_str(), json_str(T.name).c_str(),
          json_str(T.bundle).c_str());
  fprintf(f, "  \"device\": {\"name\": %s, \"cc\": \"%d.%d\", \"sms\": %d, \"driver\": %d, \"runtime\": %d},\n",
          json_str(prop.name).c_str(), prop.major, prop.minor, prop.multiProcessorCount, driver, runtime);
  fprintf(f, "  \"instances_per_launch\": %u,\n  \"groups\": %u,\n  \"block_threads\": %u,\n", ninst, ngroups,
          block);
  fprintf(f, "  \"cluster_dim\": %u,\n  \"seed\": %llu,\n  \"seconds\": %.3f,\n", T.cluster_dim, o.seed,
          elapsed);
  fprintf(f, "  \"runs\": %llu,\n  \"timeouts\": %llu,\n", total, total_to);
  fprintf(f, "  \"configs\": [\n");
  for (int c = 0; c < NCONFIGS; ++c) {
    fprintf(f,
            "    {\"name\": \"%s\", \"barrier_start\": %s, \"stress\": %s, \"launches\": %llu, \"runs\": %llu, "
            "\"timeouts\": %llu}%s\n",
            CONFIG_NAMES[c], (c & 1) ? "true" : "false", (c & 2) ? "true" : "false", launches[c], runs[c],
            timeouts[c], c + 1 < NCONFIGS ? "," : "");
  }
  fprintf(f, "  ],\n  \"columns\": [");
  for (unsigned j = 0; j < T.ncols; ++j) fprintf(f, "%s%s", j ? ", " : "", json_str(T.col_names[j]).c_str());
  fprintf(f, "],\n  \"outcomes\": [");
  size_t n = 0;
  for (const auto& kv : hist) {
    unsigned long long count = 0;
    for (int c = 0; c < NCONFIGS; ++c) count += kv.second[c];
    fprintf(f, "%s\n    {\"values\": [", n++ ? "," : "");
    for (size_t j = 0; j < kv.first.size(); ++j) fprintf(f, "%s%d", j ? ", " : "", kv.first[j]);
    fprintf(f, "], \"count\": %llu, \"by_config\": [%llu, %llu, %llu, %llu]}", count, kv.second[0],
            kv.second[1], kv.second[2], kv.second[3]);
  }
  fprintf(f, "%s]\n}\n", n ? "\n  " : "");
  fclose(f);
  remove(started.c_str());
  printf("%s %s: %llu runs, %zu outcomes, %llu timeouts, %.1f s\n", T.id, T.path, total, hist.size(),
         total_to, elapsed);
  fflush(stdout);

  mainr.destroy();
  PTXMC_CUDA(cudaFree(L.res));
  PTXMC_CUDA(cudaFree(L.final_locs));
  PTXMC_CUDA(cudaFree(L.start));
  PTXMC_CUDA(cudaFree(L.scratch));
}

}  // namespace ptxmc
