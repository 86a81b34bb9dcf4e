/* toolchain: everything about compilers, in one place. Which compilers and binary tools a
 * target's stages use, what identifies them in stage keys, the ${cc}-style variables and the
 * PATH of build steps and the CMake toolchain file each stage gets (crossfiles.c writes
 * the files of a finished sysroot).
 *
 * A target's toolchain is either the host's LLVM (the default) or the tools stages its
 * `toolchain:` list names. Tools stages install into a host prefix (`installs: tools`) that
 * never enters the sysroot; each says which tools it provides (`provides: {cc: bin/x-gcc}`).
 * A provided tool replaces the host's; what is not provided stays the host LLVM's. Keys of
 * stages built with a stage toolchain carry that stage's output, not the host compiler's
 * hash (plan.c adds the line).
 *
 * toolchain_host_probe() reads files; toolchain_host_want_gcc() asks the host GCC where its
 * compilers are (the only processes spawned here), only for a plan that has a ${host_gcc} step;
 * toolchain_host_fake() lets tests plan without any compiler installed. */
#ifndef CROSSROOT_TOOLCHAIN_H
#define CROSSROOT_TOOLCHAIN_H

#include "digest.h"
#include "recipes.h"

#define HOST_GCC "/usr/bin/gcc"
#define HOST_GXX "/usr/bin/g++"

/* The host's LLVM: the default toolchain, and the compiler of tools stages. */
struct host_llvm {
	char *bin;                  /* directory of clang, ld.lld, llvm-ar, ... */
	char *clang_version;        /* name of clang's resource directory, e.g. "19" */
	char *resource_dir;         /* the host clang's resource directory */
	char identity[DIGEST_HEX_LEN + 1];   /* clang, lld, llvm-ar and LLVM's libraries */
	/* A host without that LLVM still builds every target whose stages a toolchain stage
	 * compiles (toolchain: [llvm]): then identity is "", clang_version and resource_dir are
	 * NULL, and llvm_missing says why (plan_create() names it for a stage that needs it). */
	char *llvm_missing;
	/* The host's GCC, which tools stages may build with (${host_gcc}: configure scripts run
	 * 2.5 times faster with it than with clang). Where it cannot be used, gcc_identity is ""
	 * and gcc_missing says why (a ${host_gcc} step's error names it). */
	char gcc_identity[DIGEST_HEX_LEN + 1];   /* gcc, g++, cc1, cc1plus */
	char *gcc, *gxx;            /* its drivers, as ${host_gcc} and ${host_gxx} */
	char *gcc_missing;          /* "'/usr/bin/g++' not found ...", or NULL */
	char *gcc_unprobed;         /* the hash cache to probe it with, until it is probed */
};

/* Find and identify the host LLVM in `bin` (a missing one sets llvm_missing). Big files are
 * hashed once: their hashes are kept in `hash_cache` by (device, inode, size, mtime). Returns
 * -1 after error() only when a file cannot be read. The host GCC is left for
 * toolchain_host_want_gcc(). */
int toolchain_host_probe(struct host_llvm *h, const char *bin, const char *hash_cache);
/* Probe the host GCC (HOST_GCC, HOST_GXX) as toolchain_host_probe_gcc() does, once: asking it
 * spawns two processes, which only a plan with a ${host_gcc} or ${host_gxx} step needs
 * (plan_create asks). Does nothing for a host already probed or faked. */
void toolchain_host_want_gcc(struct host_llvm *h);
/* Identify the host GCC whose drivers are `gcc` and `gxx` (HOST_GCC, HOST_GXX for a probe):
 * the drivers and the compilers they name when asked (`gcc -print-prog-name=cc1`, `g++
 * -print-prog-name=cc1plus`; GCC 12 keeps them in /usr/lib/gcc/..., GCC 14 in /usr/libexec/gcc/...),
 * by content. Sets gcc, gxx and gcc_identity, or gcc_missing. Never fails otherwise. */
void toolchain_host_probe_gcc(struct host_llvm *h, const char *gcc, const char *gxx,
                              const char *hash_cache);
/* A host LLVM that is not looked at: for tests of the planner. */
void toolchain_host_fake(struct host_llvm *h, const char *bin, const char *clang_version,
                         const char *identity);
void toolchain_host_release(struct host_llvm *h);

/* Where one stage instance builds. */
struct stage_paths {
	const char *work;           /* mapped to /crossroot in debug info (-ffile-prefix-map) */
	const char *sysroot;        /* the stage's private sysroot */
	const char *tools;          /* the stage's private tools prefix */
	const char *build, *destdir;
	const char *cmake_toolchain;/* where toolchain_write_cmake_file() puts its file */
};

/* The ${variables} of a stage of target `t` whose compilers come from `provided` (name, path
 * under paths->tools, ...; the union of the target's toolchain stages' `provides`, empty for
 * the host LLVM; NULL for a tools stage, which is built for the host). Appends name, value
 * pairs to `vars`. */
void toolchain_stage_vars(const struct host_llvm *h, const struct target *t,
                          const struct strlist *provided, const struct stage_paths *paths,
                          int jobs, struct strlist *vars);
/* PATH for build steps: the tools prefix's bin first, then the host LLVM (for a stage that
 * uses it: plan.c's uses_host_llvm()), then the system. */
char *toolchain_step_path(const struct host_llvm *h, const char *tools, bool host_llvm);
/* Write the stage's CMake toolchain file (${cmake_toolchain}) from its variables. */
int toolchain_write_cmake_file(const char *path, const struct target *t,
                               const struct strlist *vars);

/* A toolchain stage with its own LLVM provides llvm_bin and clang_resource_dir (paths under
 * its prefix `prefix`): then ${llvm_bin}, ${clang}, ${clangxx}, ${clang_resource_dir} and
 * ${clang_version} are its, and every tool it does not provide by name is its LLVM's (its
 * llvm-size, not the host's). Without them, the host LLVM's. Each returns a malloc'd string. */
char *toolchain_llvm_bin(const struct host_llvm *h, const struct strlist *provided,
                         const char *prefix);
char *toolchain_clang_version(const struct host_llvm *h, const struct strlist *provided);
/* Tool `name` (cc, ar, ...): the provided one, else `llvm_name` (clang, llvm-ar, ...) in the
 * LLVM bin directory above. */
char *toolchain_tool(const struct host_llvm *h, const struct strlist *provided,
                     const char *prefix, const char *name, const char *llvm_name);

/* Variables and tools shared with crossfiles.c */
const char *toolchain_var(const struct strlist *pairs, const char *name);   /* last value */
bool toolchain_is_clang(const char *driver);   /* takes --target and clang's runtime flags */
extern const char *const toolchain_llvm_tools[][2];   /* name stages know, host LLVM tool */
extern const size_t toolchain_n_llvm_tools;
/* Windows targets' binary tools as well: import libraries (dlltool) and resources (windres) */
extern const char *const toolchain_windows_tools[][2];
extern const size_t toolchain_n_windows_tools;

/* Does CMake know the target's system (Linux, Generic), or does it need the platform module
 * toolchain_write_cmake_platform writes (WASI)? */
bool toolchain_cmake_knows_system(const struct target *t);
/* CMake's platform module for a system it does not know (WASI): DIR/cmake/Platform/
 * <system>.cmake, for a toolchain file that puts DIR/cmake on CMAKE_MODULE_PATH. It sets the
 * variable projects test (WASI, as wasi-sdk's module does). Returns 0, or -1 after error(). */
int toolchain_write_cmake_platform(const char *dir, const struct target *t);

#endif
