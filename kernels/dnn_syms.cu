/*
 * dnn_syms: the table of kernels/dnn_syms.h, filled by dlopen and dlsym
 * the first time a back end is needed (real CUDA builds; the emulated
 * build links the stand-ins and has nothing to load).
 */
#define FS_DNN_SYMS_TABLE 1
#include "dnn_syms.h"

#include <stdio.h>

#if defined(FS_CUDA_EMULATE)
int fs_dnn_load(FsDnnBackend be, FsErr *err)
{
    (void)be, (void)err;
    return 0;
}
#else
#include <dlfcn.h>
#include <pthread.h>

struct FsDnnSyms fs_dnn_syms;

#define FS_STR_(x) #x
#define FS_STR(x) FS_STR_(x)

/* One library: its soname for this build's major version, then the same
 * file in the toolkit's folder the build used (FS_CUDA_LIBDIR), for a node
 * whose loader does not search there. */
static void *load_lib(const char *soname, const char *dir, char *why, size_t n)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    snprintf(why, n, "%s", dlerror());
    if (!dir || !*dir) return NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, soname);
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* The folders the build found the libraries in (CMakeLists.txt). */
#ifndef FS_CUBLAS_LIBDIR
#define FS_CUBLAS_LIBDIR ""
#endif
#ifndef FS_CUDNN_LIBDIR
#define FS_CUDNN_LIBDIR ""
#endif

static struct {
    pthread_mutex_t lock;
    int done[2], rc[2];
    char why[2][512];
} loaded = {PTHREAD_MUTEX_INITIALIZER, {0, 0}, {0, 0}, {"", ""}};

#define FS_SYM_LOAD(f)                                                                                    \
    if (!miss) {                                                                                          \
        fs_dnn_syms.f = (decltype(fs_dnn_syms.f))dlsym(h, #f);                                            \
        if (!fs_dnn_syms.f) miss = #f;                                                                    \
    }

static int load_cublas(char *why, size_t n)
{
    const char *so = "libcublas.so." FS_STR(CUBLAS_VER_MAJOR);
    void *h = load_lib(so, FS_CUBLAS_LIBDIR, why, n);
    if (!h) return -1;
    const char *miss = NULL;
    FS_CUBLAS_SYMS(FS_SYM_LOAD)
    if (miss) return snprintf(why, n, "%s has no %s", so, miss), -1;
    return 0;
}

#ifdef DNN_WITH_CUDNN
static int load_cudnn(char *why, size_t n)
{
    const char *so = "libcudnn.so." FS_STR(CUDNN_MAJOR);
    void *h = load_lib(so, FS_CUDNN_LIBDIR, why, n);
    if (!h) return -1;
    const char *miss = NULL;
    FS_CUDNN_SYMS(FS_SYM_LOAD)
    if (miss) return snprintf(why, n, "%s has no %s", so, miss), -1;
    return 0;
}
#endif

int fs_dnn_load(FsDnnBackend be, FsErr *err)
{
    const int i = be == FS_DNN_CUDNN;
    pthread_mutex_lock(&loaded.lock);
    if (!loaded.done[i]) {
#ifdef DNN_WITH_CUDNN
        loaded.rc[i] = i ? load_cudnn(loaded.why[i], sizeof loaded.why[i]) : load_cublas(loaded.why[i], sizeof loaded.why[i]);
#else
        loaded.rc[i] = i ? -1 : load_cublas(loaded.why[i], sizeof loaded.why[i]);
        if (i) snprintf(loaded.why[i], sizeof loaded.why[i], "this build has no cuDNN back end");
#endif
        loaded.done[i] = 1;
    }
    const int rc = loaded.rc[i];
    if (rc && err)
        fs_err_set(err, "the GPU library tier cannot load %s: %s", i ? "cuDNN" : "cuBLAS", loaded.why[i]);
    pthread_mutex_unlock(&loaded.lock);
    return rc;
}
#endif
