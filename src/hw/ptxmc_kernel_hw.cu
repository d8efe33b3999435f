// ptxmc kernel runner: launches one compiled kernel of the corpus many times
// and writes the histogram of its final buffers. Written by `ptxmc hw kernels`;
// do not edit. Needs only the CUDA toolkit (runtime + driver API, C++17).
// See docs/hardware.md ("Kernels on the GPU") in the ptxmc sources.
//
//   ptxmc_kernel_hw SPEC OUT.json
//
// SPEC is the line format `ptxmc hw kernels` writes (one directive a line):
//   id ID                      harness id (file names)
//   test PATH                  the kernel's path as given to ptxmc
//   cubin FILE                 the kernel's PTX, assembled by ptxas (the
//                              exact PTX the model checked)
//   entry NAME                 the mangled `.entry` name
//   grid X Y Z / block X Y Z / cluster X Y Z (0 0 0: no cluster launch)
//   cooperative                a cooperative launch (CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
//                              the grid workspace of cg::this_grid().sync())
//   buffer NAME BYTES SIGNED LEN V0 V1 ...   a pointer parameter
//   scalar NAME BYTES SIGNED V               a value parameter
//   tensormap NAME BYTES SIGNED DTYPE RANK D0 .. B0 .. LEN V0 V1 ...
//                              a CUtensorMap parameter: the tensor (dims D,
//                              innermost first) is allocated and filled like
//                              a buffer (its elements are histogram columns)
//                              and a tiled map with box B is encoded over it
//                              (cuTensorMapEncodeTiled, data type
//                              CU_TENSOR_MAP_DATA_TYPE_<DTYPE>), passed by value
//   struct NAME                a by-value struct parameter (CUTLASS's
//                              `Params`); its fields are the `field` lines
//                              that follow it
//   field OFFSET buffer ... / field OFFSET scalar ...
//                              a field of the last struct at byte OFFSET: a
//                              pointer to a new buffer (8 bytes; its elements
//                              are histogram columns) or a value, the rest of
//                              the line as for a parameter
//   launches N                 launches per configuration
//   timeout_ms T               a launch that has not finished after T ms is
//                              a hang: the histogram so far is written with
//                              "hangs": 1 and the process exits with status 4
//                              (the GPU context cannot be recovered); a launch
//                              that fails on the GPU is written as "fault"
//                              with the driver's message, and status 5
// Parameters are passed in the order of the lines.
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#define CU(x)                                                                      \
  do {                                                                             \
    CUresult e_ = (x);                                                             \
    if (e_ != CUDA_SUCCESS) {                                                      \
      const char* s_ = nullptr;                                                    \
      cuGetErrorString(e_, &s_);                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      exit(3);                                                                     \
    }                                                                              \
  } while (0)

#define CUDART(x)                                                              \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,              \
              cudaGetErrorString(e_));                                         \
      exit(3);                                                                 \
    }                                                                          \
  } while (0)

struct Param {
  bool buffer;
  bool is_struct = false;      // a by-value struct: `blob` is passed
  int parent = -1;             // a field of this struct parameter, or -1
  unsigned long long offset = 0;  // the field's byte offset in its struct
  std::vector<unsigned char> blob;  // the struct's bytes
  bool tmap = false;           // a tensor map over the buffer
  std::string dtype;           // its CU_TENSOR_MAP_DATA_TYPE_* suffix
  std::vector<unsigned long long> dims, box;  // innermost first
  std::string name;
  unsigned bytes;
  bool is_signed;
  std::vector<long long> init;  // buffer contents, or the scalar's one value
  CUdeviceptr dev = 0;
  unsigned long long scalar = 0;  // the value parameter's bytes
  CUtensorMap map;                // the encoded tensor map (128 bytes, 64-aligned)
};

static bool tensor_map_type(const std::string& name, CUtensorMapDataType* t) {
  static const std::map<std::string, CUtensorMapDataType> types = {
      {"UINT8", CU_TENSOR_MAP_DATA_TYPE_UINT8},     {"UINT16", CU_TENSOR_MAP_DATA_TYPE_UINT16},
      {"UINT32", CU_TENSOR_MAP_DATA_TYPE_UINT32},   {"INT32", CU_TENSOR_MAP_DATA_TYPE_INT32},
      {"UINT64", CU_TENSOR_MAP_DATA_TYPE_UINT64},   {"INT64", CU_TENSOR_MAP_DATA_TYPE_INT64},
      {"FLOAT32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32}, {"FLOAT64", CU_TENSOR_MAP_DATA_TYPE_FLOAT64},
  };
  auto it = types.find(name);
  if (it == types.end()) return false;
  *t = it->second;
  return true;
}

struct Spec {
  std::string id, test, cubin, entry;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, cluster[3] = {0, 0, 0};
  bool cooperative = false;
  std::vector<Param> params;
  unsigned long long launches = 1000;
  unsigned timeout_ms = 2000;
};

static Spec read_spec(const char* path) {
  std::ifstream in(path);
  if (!in) {
    fprintf(stderr, "%s: cannot read\n", path);
    exit(2);
  }
  Spec s;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    lineno++;
    std::istringstream ls(line);
    std::string key;
    if (!(ls >> key) || key[0] == '#') continue;
    bool ok = true;
    if (key == "id") ok = bool(ls >> s.id);
    else if (key == "test") ok = bool(ls >> s.test);
    else if (key == "cubin") ok = bool(ls >> s.cubin);
    else if (key == "entry") ok = bool(ls >> s.entry);
    else if (key == "grid") ok = bool(ls >> s.grid[0] >> s.grid[1] >> s.grid[2]);
    else if (key == "block") ok = bool(ls >> s.block[0] >> s.block[1] >> s.block[2]);
    else if (key == "cluster") ok = bool(ls >> s.cluster[0] >> s.cluster[1] >> s.cluster[2]);
    else if (key == "cooperative") s.cooperative = true;
    else if (key == "launches") ok = bool(ls >> s.launches);
    else if (key == "timeout_ms") ok = bool(ls >> s.timeout_ms);
    else if (key == "struct") {
      Param p;
      p.buffer = false;
      p.is_struct = true;
      p.bytes = 8;
      ok = bool(ls >> p.name);
      // Zeroed and as large as any kernel's parameter space (32,764 bytes):
      // the driver copies the kernel's declared size from it, and bytes no
      // field covers are read by no checked kernel.
      p.blob.assign(32768, 0);
      s.params.push_back(p);
    } else if (key == "buffer" || key == "scalar" || key == "tensormap" || key == "field") {
      Param p;
      if (key == "field") {
        int parent = (int)s.params.size() - 1;
        while (parent >= 0 && !s.params[parent].is_struct) parent--;
        ok = parent >= 0 && bool(ls >> p.offset >> key) && (key == "buffer" || key == "scalar");
        p.parent = parent;
      }
      p.buffer = key != "scalar";
      p.tmap = key == "tensormap";
      int sign = 0;
      size_t len = 1;
      ok = bool(ls >> p.name >> p.bytes >> sign);
      p.is_signed = sign != 0;
      if (ok && p.tmap) {
        unsigned rank = 0;
        CUtensorMapDataType t;
        ok = bool(ls >> p.dtype >> rank) && rank >= 1 && rank <= 5 && tensor_map_type(p.dtype, &t);
        for (unsigned k = 0; ok && k < 2 * rank; k++) {
          unsigned long long d;
          ok = bool(ls >> d);
          (k < rank ? p.dims : p.box).push_back(d);
        }
      }
      if (ok && p.buffer) ok = bool(ls >> len);
      for (size_t i = 0; ok && i < len; i++) {
        long long v;
        ok = bool(ls >> v);
        p.init.push_back(v);
      }
      ok = ok && (p.bytes == 1 || p.bytes == 2 || p.bytes == 4 || p.bytes == 8);
      ok = ok && (p.parent < 0 || p.offset + (p.buffer ? 8 : p.bytes) <= 32768);
      if (ok) s.params.push_back(p);
    } else ok = false;
    if (!ok) {
      fprintf(stderr, "%s:%d: cannot read '%s'\n", path, lineno, line.c_str());
      exit(2);
    }
  }
  return s;
}

// Extra warps that hammer scratch memory while the kernel runs (the stress
// configuration), on a stream of their own.
__global__ void ptxmc_stress(unsigned* scratch, unsigned n, unsigned iters) {
  unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) * 97u;
  for (unsigned k = 0; k < iters; k++) {
    unsigned j = (i + k * 1031u) % n;
    scratch[j] = scratch[(j + 512u) % n] + 1u;
  }
}

static long long decode(const unsigned char* p, unsigned bytes, bool is_signed) {
  unsigned long long u = 0;
  memcpy(&u, p, bytes);
  if (is_signed && bytes < 8) {
    unsigned shift = 64 - 8 * bytes;
    return (long long)(u << shift) >> shift;
  }
  return (long long)u;
}

static void encode(unsigned char* p, unsigned bytes, long long v) {
  unsigned long long u = (unsigned long long)v;
  memcpy(p, &u, bytes);
}

struct Histogram {
  std::map<std::vector<long long>, std::vector<unsigned long long>> counts;  // per config
  unsigned long long runs[2] = {0, 0}, launches[2] = {0, 0};
  unsigned hangs = 0;
  std::string fault;  // the error of a launch that failed, if one did
};

static void write_json(const Spec& s, const Histogram& h, const char* out, double seconds) {
  FILE* f = fopen(out, "w");
  if (!f) {
    perror(out);
    exit(3);
  }
  int dev = 0, drv = 0, rt = 0;
  cudaDeviceProp prop;
  CUDART(cudaGetDevice(&dev));
  CUDART(cudaGetDeviceProperties(&prop, dev));
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  fprintf(f, "{\n  \"schema\": \"ptxmc-hw-histogram/1\",\n");
  fprintf(f, "  \"id\": \"%s\", \"test\": \"%s\", \"name\": \"%s\",\n", s.id.c_str(), s.test.c_str(),
          s.entry.c_str());
  fprintf(f,
          "  \"device\": {\"name\": \"%s\", \"cc\": \"%d.%d\", \"sms\": %d, \"driver\": %d, "
          "\"runtime\": %d},\n",
          prop.name, prop.major, prop.minor, prop.multiProcessorCount, drv, rt);
  fprintf(f, "  \"instances_per_launch\": 1, \"seconds\": %.3f,\n", seconds);
  fprintf(f, "  \"runs\": %llu, \"timeouts\": %u, \"hangs\": %u,\n", h.runs[0] + h.runs[1], h.hangs,
          h.hangs);
  if (!h.fault.empty()) fprintf(f, "  \"fault\": \"%s\",\n", h.fault.c_str());
  const char* names[2] = {"plain", "stress"};
  fprintf(f, "  \"configs\": [");
  for (int c = 0; c < 2; c++)
    fprintf(f,
            "%s{\"name\": \"%s\", \"barrier_start\": false, \"stress\": %s, \"launches\": %llu, "
            "\"runs\": %llu, \"timeouts\": 0}",
            c ? ", " : "", names[c], c ? "true" : "false", h.launches[c], h.runs[c]);
  fprintf(f, "],\n  \"columns\": [");
  bool first = true;
  for (const Param& p : s.params) {
    if (!p.buffer) continue;
    for (size_t i = 0; i < p.init.size(); i++) {
      fprintf(f, "%s\"%s[%zu]\"", first ? "" : ", ", p.name.c_str(), i);
      first = false;
    }
  }
  fprintf(f, "],\n  \"outcomes\": [");
  first = true;
  for (const auto& [values, by] : h.counts) {
    unsigned long long total = 0;
    for (auto c : by) total += c;
    fprintf(f, "%s\n    {\"values\": [", first ? "" : ",");
    for (size_t i = 0; i < values.size(); i++) fprintf(f, "%s%lld", i ? ", " : "", values[i]);
    fprintf(f, "], \"count\": %llu, \"by_config\": [%llu, %llu]}", total, by[0], by[1]);
    first = false;
  }
  fprintf(f, "\n  ]\n}\n");
  fclose(f);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s SPEC OUT.json\n", argv[0]);
    return 2;
  }
  Spec s = read_spec(argv[1]);
  CUDART(cudaFree(0));  // the runtime's primary context, which the driver calls share
  CUmodule module;
  CUfunction fn;
  CU(cuModuleLoad(&module, s.cubin.c_str()));
  CU(cuModuleGetFunction(&fn, module, s.entry.c_str()));
  if (s.cluster[0]) CU(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));

  // Host copies live in page-locked memory: a copy from pageable memory
  // would block the host until the kernel ends, and a hang would then stop
  // the watchdog too.
  std::vector<void*> args;
  std::vector<unsigned char*> host(s.params.size(), nullptr), back(s.params.size(), nullptr);
  std::vector<size_t> size(s.params.size(), 0);
  for (size_t i = 0; i < s.params.size(); i++) {
    Param& p = s.params[i];
    if (p.buffer) {
      size[i] = p.init.size() * p.bytes;
      size_t n = size[i] ? size[i] : 1;
      CU(cuMemAllocHost((void**)&host[i], n));
      CU(cuMemAllocHost((void**)&back[i], n));
      for (size_t k = 0; k < p.init.size(); k++) encode(&host[i][k * p.bytes], p.bytes, p.init[k]);
      CU(cuMemAlloc(&p.dev, n));
      if (p.tmap) {
        CUtensorMapDataType t;
        tensor_map_type(p.dtype, &t);
        unsigned rank = (unsigned)p.dims.size();
        cuuint64_t dims[5], strides[4];
        cuuint32_t box[5], elem_strides[5];
        unsigned long long stride = p.bytes;
        for (unsigned k = 0; k < rank; k++) {
          dims[k] = p.dims[k];
          box[k] = (cuuint32_t)p.box[k];
          elem_strides[k] = 1;
          stride *= p.dims[k];
          if (k + 1 < rank) strides[k] = stride;
        }
        CU(cuTensorMapEncodeTiled(&p.map, t, rank, (void*)p.dev, dims, strides, box, elem_strides,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
      }
    } else if (!p.is_struct) {
      encode((unsigned char*)&p.scalar, p.bytes, p.init[0]);
    }
    if (p.parent >= 0) {
      // A struct's field: the buffer's device address or the value, at its offset.
      unsigned char* at = s.params[p.parent].blob.data() + p.offset;
      if (p.buffer) memcpy(at, &p.dev, sizeof p.dev);
      else encode(at, p.bytes, p.init[0]);
    }
  }
  for (Param& p : s.params) {
    if (p.parent >= 0) continue;
    args.push_back(p.is_struct ? (void*)p.blob.data()
                   : p.tmap    ? (void*)&p.map
                   : p.buffer  ? (void*)&p.dev
                               : (void*)&p.scalar);
  }

  CUstream stream, side;
  CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CU(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));
  const unsigned scratch_words = 1u << 20;
  unsigned* scratch;
  CUDART(cudaMalloc(&scratch, scratch_words * sizeof(unsigned)));

  CUlaunchAttribute attr[2];
  CUlaunchConfig cfg = {};
  cfg.gridDimX = s.grid[0];
  cfg.gridDimY = s.grid[1];
  cfg.gridDimZ = s.grid[2];
  cfg.blockDimX = s.block[0];
  cfg.blockDimY = s.block[1];
  cfg.blockDimZ = s.block[2];
  cfg.hStream = stream;
  if (s.cluster[0]) {
    attr[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr[0].value.clusterDim.x = s.cluster[0];
    attr[0].value.clusterDim.y = s.cluster[1];
    attr[0].value.clusterDim.z = s.cluster[2];
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  if (s.cooperative) {
    attr[cfg.numAttrs].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr[cfg.numAttrs].value.cooperative = 1;
    cfg.attrs = attr;
    cfg.numAttrs++;
  }

  Histogram h;
  auto start = std::chrono::steady_clock::now();
  std::vector<long long> values;
  for (int c = 0; c < 2; c++) {
    for (unsigned long long n = 0; n < s.launches; n++) {
      for (size_t i = 0; i < s.params.size(); i++)
        if (s.params[i].buffer && size[i])
          CU(cuMemcpyHtoDAsync(s.params[i].dev, host[i], size[i], stream));
      if (c == 1) {
        ptxmc_stress<<<264, 128, 0, (cudaStream_t)side>>>(scratch, scratch_words, 256);
      }
      CU(cuLaunchKernelEx(&cfg, fn, args.data(), nullptr));
      for (size_t i = 0; i < s.params.size(); i++)
        if (s.params[i].buffer && size[i])
          CU(cuMemcpyDtoHAsync(back[i], s.params[i].dev, size[i], stream));
      // The watchdog: a launch that does not finish in time is a hang.
      auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(s.timeout_ms);
      CUresult q;
      while ((q = cuStreamQuery(stream)) == CUDA_ERROR_NOT_READY) {
        if (std::chrono::steady_clock::now() > deadline) {
          h.hangs = 1;
          h.launches[c]++;
          double secs =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          write_json(s, h, argv[2], secs);
          printf("%s %s: hang after %llu runs\n", s.id.c_str(), s.test.c_str(),
                 h.runs[0] + h.runs[1]);
          fflush(stdout);
          _exit(4);
        }
        usleep(20);
      }
      if (q != CUDA_SUCCESS) {
        // The launch failed on the GPU (a trap, an illegal instruction or
        // address, an mbarrier error): recorded as a fault, which only a
        // program with undefined behaviour may show.
        const char* why = nullptr;
        cuGetErrorString(q, &why);
        h.fault = why ? why : "unknown error";
        h.launches[c]++;
        double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        write_json(s, h, argv[2], secs);
        printf("%s %s: fault after %llu runs: %s\n", s.id.c_str(), s.test.c_str(),
               h.runs[0] + h.runs[1], h.fault.c_str());
        fflush(stdout);
        _exit(5);
      }
      h.launches[c]++;
      h.runs[c]++;
      values.clear();
      for (size_t i = 0; i < s.params.size(); i++) {
        const Param& p = s.params[i];
        if (!p.buffer) continue;
        for (size_t k = 0; k < p.init.size(); k++)
          values.push_back(decode(back[i] + k * p.bytes, p.bytes, p.is_signed));
      }
      auto& by = h.counts[values];
      if (by.empty()) by.assign(2, 0);
      by[c]++;
    }
    CU(cuStreamSynchronize(side));
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_json(s, h, argv[2], secs);
  printf("%s %s: %llu runs, %zu outcomes, %.1f s\n", s.id.c_str(), s.test.c_str(),
         h.runs[0] + h.runs[1], h.counts.size(), secs);
  return 0;
}
