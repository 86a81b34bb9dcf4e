/* recipes: the data model (targets, stages, sources) loaded from YAML and validated.
 *
 * Layout under the project root:
 *   targets/<name>.yaml   one machine and the stages it wants; no build logic
 *   stages/<name>.yaml    how to build one component: sources, dependencies, shell steps
 *   sources/<name>.yaml   where a source comes from: origins, each pinned by sha256
 * Every validation problem is reported as file:line:column and counted; a load fails (-1)
 * when any was found, so the user sees all problems of a file at once. */
#ifndef CROSSROOT_RECIPES_H
#define CROSSROOT_RECIPES_H

#include <stddef.h>

#include "digest.h"
#include "util.h"

/* Where a YAML value came from, to point errors found after loading at their line. */
struct location {
	const char *path;   /* borrowed from the owning recipe */
	size_t line, column;
};

enum origin_kind {
	ORIGIN_URL,         /* https://, http:// or file:// */
	ORIGIN_APT,         /* a file of a Debian source package, found through apt */
	ORIGIN_DEB,         /* a Debian binary package of any architecture, found through apt
	                       (the .deb itself: a kernel image for `crossroot test --system`) */
	ORIGIN_POOL,        /* a file in the pool of the Debian archive the host's apt uses: a
	                       package of another Debian release, which apt's indices do not list */
};

struct origin {
	enum origin_kind kind;
	char *url;          /* ORIGIN_URL */
	char *package;      /* ORIGIN_APT: source package name; ORIGIN_DEB: binary package name */
	char *version;      /* ORIGIN_APT, ORIGIN_DEB: exact Debian version, e.g. 1:19.1.7-3~deb12u1 */
	char *arch;         /* ORIGIN_DEB: its Debian architecture, e.g. arm64 */
	char *file;         /* ORIGIN_APT: which file of the package, e.g. musl_1.2.3.orig.tar.gz;
	                       ORIGIN_POOL: its path under pool/, main/m/musl/musl_1.2.5.orig.tar.gz */
	char sha256[DIGEST_HEX_LEN + 1];
	long long max_size; /* bytes; a body larger than this is refused */
	char *signature;    /* detached OpenPGP signature: a URL (url origins) or a file of the
	                       same source package (apt origins) or pool directory (pool origins);
	                       NULL: none */
	struct location where;
};

struct source {
	char *id;                   /* the file's name: "musl" (sources/musl.yaml), or
	                               "musl-1.2.5" for another version a target can choose */
	char *name, *version;
	char *path;                 /* the YAML file */
	struct origin *origins;
	size_t n_origins;
	struct strlist extract;     /* path patterns to extract (after strip); empty: all */
	struct strlist exclude;     /* path patterns never extracted */
	int strip;                  /* leading path components removed (default 1) */
	char *keyring;              /* absolute path of the pinned keyring, or NULL */
	char *member;               /* the archive to extract is this member of the downloaded
	                               one (Debian's gcc orig tarball holds upstream's); or NULL */
	char member_sha256[DIGEST_HEX_LEN + 1];   /* its pin, checked before it is used */
	const struct source *base;  /* a stage's own view of this source (its `extract`): every
	                               field but id and extract is borrowed from base; or NULL */
};

struct step {
	char *command;              /* shell text with ${variables} */
	struct location where;
};

/* Where a stage's output goes. */
enum installs {
	INSTALLS_SYSROOT,           /* the target's sysroot (libraries, headers, start files) */
	INSTALLS_TOOLS,             /* a host prefix that never enters the sysroot: the stages
	                               depending on it find it in ${tools} and on PATH */
};

struct stage {
	char *name;
	char *path;
	char *description;
	struct strlist sources;     /* names of sources/<name>.yaml; the first is ${src} */
	struct strlist depends;     /* stages whose output must be in ${sysroot} */
	struct strlist arch_depends;   /* architecture, stage, ...: more `depends` for targets of
	                                  that architecture (the triple's first part): the
	                                  builtins need Linux's headers on riscv only */
	struct strlist shared_depends; /* more `depends` for a target with shared libraries only
	                                  (musl links libc.so with the builtins; libc.a needs none) */
	struct strlist brings;      /* stages a sysroot with this one also gets, which its build
	                               does not wait for: musl brings Linux's UAPI headers to a
	                               C-only sysroot but never reads them */
	struct step *steps;
	size_t n_steps;
	char *text;                 /* the whole YAML text (the key hashes the parsed fields) */
	bool exclusive;             /* runs alone with the whole job budget (${jobs}): for build
	                               tools that cannot join the make jobserver, like ninja */
	bool chroot;                /* its steps run as root of their own user namespace with
	                               CAP_SYS_CHROOT, and no other capability (glibc's ldconfig
	                               -r chroots into the stage's tree); nested user namespaces
	                               stay refused */
	bool resume;                /* an interrupted or failed build keeps ${build}: the next run
	                               with the same key runs the steps again there, and the
	                               build system (ninja, make) redoes only what is left */
	enum installs installs;
	struct strlist provides;    /* tools stages: tool name, path under the prefix, ... (what a
	                               target naming this stage as its toolchain compiles with) */
	struct strlist unsupported; /* architecture, reason, ...: the triples' first parts this
	                               stage cannot be built for, said at plan time */
	struct strlist unsupported_fixed_in; /* architecture, version, ...: from this version of
	                               the stage's first source on, the architecture is built */
	struct location unsupported_where;
	bool has_toolchain;         /* `toolchain:` given: it overrides the target's toolchain */
	struct strlist toolchain;   /* tools stages whose compilers build this stage; empty with
	                               has_toolchain: the host clang */
	bool has_machine;           /* `machine:` given: of the target's machine, only the facts
	                               it lists enter the key (triple, cflags, linux_arch,
	                               cpu_family, cpu, endian, static), so targets that agree on
	                               them share the stage (Linux's headers, by linux_arch) */
	struct strlist machine;
	bool has_extract;           /* `extract:` given: the parts of its first source (${src})
	                               this stage extracts, over the source's own list (the
	                               compiler needs llvm/ and clang/, the runtimes do not) */
	struct strlist extract;
	bool split_debug;           /* `debug: split`: after its steps, the DWARF of what it
	                               installed moves to usr/lib/debug (see debuginfo.h); not for
	                               a static-only target, which has no shared object to keep it
	                               apart from (its archives keep what ${debug_flag} gave) */
	bool extra;                 /* `extra: true`: something besides the C and C++ runtimes
	                               (sanitizers, OpenMP), which a static-only build of a target
	                               that lists it leaves out unless asked for (`with`) */
	struct strlist vars;        /* name, default, ...: the value of ${name} for a target whose
	                               own `vars` do not set it */
	struct strlist supersedes;  /* stages whose output this one replaces wherever both would
	                               be installed (glibc's full headers over its bootstrap ones) */
	char recipe_hash[DIGEST_HEX_LEN + 1];   /* of the parsed recipe: comments and layout do
	                                           not change it, every field that matters does */
};

/* What runs the target's programs: for `crossroot test`, the sysroot's <target>-run wrapper
 * and the emulator CMake and Meson are given. */
enum runner {
	RUNNER_QEMU_USER,           /* qemu-user (the target's `qemu`): Linux programs */
	RUNNER_WASI,                /* Node.js's WASI (preview 1): WebAssembly programs */
	RUNNER_SEMIHOSTING,         /* qemu-system (`qemu`) on a board (`qemu_machine`), the
	                               program's I/O and exit through semihosting: bare metal */
	RUNNER_WINE,                /* wine: Windows programs */
	RUNNER_NONE,                /* nothing here runs them: built and linked only */
};

struct target {
	char *name;                 /* file name without .yaml: the tool prefix */
	char *path;
	char *description;
	char *triple;               /* what clang gets as --target */
	enum runner runner;         /* `runner:` qemu-user (the default), wasi, semihosting, wine
	                               or none */
	char *qemu;                 /* the qemu binary that runs the target's programs (qemu-user,
	                               or qemu-system for semihosting): letters, digits and
	                               /._+-,=:@% only (run wrappers run it by a shell); NULL for
	                               the wasi runner */
	char *qemu_cpu;             /* the CPU model it emulates (-cpu), or NULL: qemu's default
	                               ("max", every feature qemu has) */
	char *qemu_machine;         /* semihosting: qemu-system's board (-M), else NULL */
	char *emulator;             /* `emulator:` the tools stage whose qemu runs the target's
	                               programs (the sysroot ships it in toolchain/), or NULL: the
	                               host's qemu, found in PATH */
	char *emulator_user_dir;    /* its provides' qemu_user_dir (the directory of `qemu`,
	                               relative to its prefix, the sysroot's toolchain/), or NULL */
	char *emulator_system_dir;  /* its qemu_system_dir (qemu-system-*, --system), or NULL */
	struct strlist cflags;      /* code generation flags: always used, also by the wrappers */
	struct strlist driver_cflags;   /* flags for users' programs only (the sysroot's clang
	                                   configuration), not the stages': a compiler defect's
	                                   avoidance that the runtimes' own code does not need */
	struct strlist driver_cxxflags;   /* the same for C++ programs only (clang++'s second
	                                     configuration file) */
	struct strlist stages;      /* wanted stages; their dependencies are added */
	struct strlist vars;        /* extra recipe variables: name, value, name, value, ... */
	struct strlist toolchain;   /* tools stages that provide the compilers; empty: host clang */
	struct strlist stage_toolchain;   /* stage, tools stage or "host", ...: the compilers of
	                                     one stage, over the stage's and the target's choice */
	struct location stage_toolchain_at;   /* where stage_toolchain is written */
	struct strlist versions;    /* source, version, ...: wherever a stage names the source,
	                               this target builds sources/<source>-<version>.yaml */
	struct location versions_at;   /* where versions is written */
	struct strlist patch_sets;  /* source, set, ...: this target's tree of the source also
	                               gets patches/<source>/<version>/<set>/ (after the version's
	                               own patches): a fix for one architecture that must not
	                               change the other targets' keys */
	struct location patch_sets_at;   /* where patches is written */
	char *libc;                 /* the C library, a fact of the target: the stage that fills the
	                               `libc` role (musl, glibc, ...), whose headers-only stage
	                               `<libc>-headers` fills `libc-headers`; ${libc} in steps;
	                               NULL: none (a stage needing a role is then an error) */
	char *libc_headers;         /* "<libc>-headers", or NULL */
	struct strlist substitute;  /* stage, replacement, ...: wherever the graph names the first,
	                               this target uses the second (a combination is a target) */
	/* architecture facts, used by stages (${linux_arch}) and the generated build files */
	char *linux_arch;           /* the kernel's ARCH for headers_install */
	char *cpu_family;           /* Meson's cpu_family */
	char *cpu;                  /* CMake's CMAKE_SYSTEM_PROCESSOR, Meson's cpu */
	char *endian;               /* little or big */
	bool static_only;           /* static runtimes only: every shared build is skipped, and
	                               the extras are left out unless `with` names them */
	struct strlist lacks;       /* what the platform does not have (recipes_capabilities):
	                               the test programs that require it are skipped */
	struct strlist with;        /* what a static-only build adds to the runtimes: stages of
	                               its `stages` that say `extra: true`, and `debug` (musl and
	                               libc++ compiled with -g, the archives keeping their DWARF);
	                               from the target's `with:` and --with */
	struct location with_at;    /* where with is written */
	char *text;
};

/* All recipes loaded so far, looked up by name and loaded on first use. */
struct recipes {
	char *root;                 /* project root holding targets/, stages/, sources/ */
	struct target **targets;
	size_t n_targets;
	struct stage **stages;
	size_t n_stages;
	struct source **sources;
	size_t n_sources;
};

void recipes_init(struct recipes *r, const char *root);
void recipes_release(struct recipes *r);

/* Load targets/<name>.yaml, then every stage it needs (transitively) and their sources.
 * Returns NULL after reporting; `from` (may be NULL) is where the name was mentioned. */
struct target *recipes_target(struct recipes *r, const char *name);
struct stage *recipes_stage(struct recipes *r, const char *name, const struct location *from);
/* `id` is the file name under sources/: a source's name, or name-version (its other versions). */
struct source *recipes_source(struct recipes *r, const char *id, const struct location *from);
/* The source target `t` builds where a stage names `name`: its `versions` choice, if any.
 * `from` (may be NULL) is where the name was mentioned. */
struct source *recipes_source_for(struct recipes *r, const struct target *t, const char *name,
                                  const struct location *from);
/* The source stage `s` extracts where it names `src` as its first source: `src` itself, or
 * (the stage gives `extract:`) a view of it with the stage's extract list, made once and
 * owned by `r`. Its identity differs from the source's, so it is a tree of its own. */
struct source *recipes_source_view(struct recipes *r, struct source *src, const struct stage *s);
/* The patch set target `t` applies to source `name` (its `patches` map), or NULL. */
const char *recipes_patch_set(const struct target *t, const char *name);
/* Why stage `s` cannot be built for `t` (a reason from its `unsupported` map), or NULL. A
 * target that patches one of the stage's sources for itself is taken at its word: the patch
 * set is how a target adds what the stage lacks (the build still checks that it did); an
 * entry with `fixed_in` holds for versions of the stage's first source before that one. */
const char *recipes_unsupported(struct recipes *r, const struct stage *s, const struct target *t);
/* What stage `s` depends on for target `t`: its `depends`, the `arch_depends` of t's
 * architecture, and its `shared_depends` unless t is static-only (names as written: roles and
 * the target's substitutions not applied). With t NULL: every one of them, any target. */
void recipes_stage_depends(const struct stage *s, const struct target *t, struct strlist *out);
/* Does target `t` build stage `s` of its `stages` list? Yes, unless `t` is static-only and
 * `s` is an extra its `with` does not name. */
bool recipes_wanted(const struct target *t, const struct stage *s);
/* Are its stages compiled with debug information (${debug_flag} is -g)? Yes, unless `t` is
 * static-only and its `with` does not name `debug`. */
bool recipes_debug(const struct target *t);
/* Check `names` (what a `with` may hold, see above) and add them to target `t`'s `with`: a
 * name the target cannot take is an error naming it (-1). `command_line` (--with, which
 * applies to every target named): a stage that exists but that `t` does not list is skipped
 * without a word, and messages name the option rather than the file. */
int recipes_add_with(struct recipes *r, struct target *t, const struct strlist *names,
                     bool command_line);
/* Whether `name` is a fact of a target's machine a stage's `machine:` may list. */
bool recipes_machine_fact(const char *name);
/* The stage this target uses where a recipe names `name`: its `substitute` map, then the
 * roles `libc` and `libc-headers` (the target's C library). */
const char *recipes_substitute(const struct target *t, const char *name);
/* Is `name` a role (`libc`, `libc-headers`) rather than a stage? */
bool recipes_is_role(const char *name);
/* The target's operating system as CMake names it (CMAKE_SYSTEM_NAME), from its triple: WASI,
 * Windows (windows-gnu, mingw32), Generic (bare metal: none as OS or vendor), else Linux */
const char *recipes_system(const struct target *t);
/* Its programs' object format, which decides the linker's flavour: elf, wasm or coff */
const char *recipes_object_format(const struct target *t);
/* Is `name` a capability a target may lack (`lacks:`) and a test program require: threads,
 * dlopen, exceptions, fenv, signals, processes, elf, files, posix? */
bool recipes_is_capability(const char *name);
/* The target's operating system as Meson's host_machine system names it: linux, wasi,
 * windows or none (bare metal; CMake's is Generic) */
const char *recipes_meson_system(const struct target *t);
/* Is `name` a system as recipes_system names them (Linux, WASI, Windows, Generic)? */
bool recipes_is_system(const char *name);
/* A Windows target's machine as dlltool (-m) and lld's MinGW driver (-m) name it, from its
 * cpu_family: {"i386:x86-64", "i386pep"}, ...; NULL for a family Windows' tools do not know */
const char *const *recipes_windows_machine(const struct target *t);
/* The capabilities above, for messages: "threads, dlopen, ..." */
extern const char recipes_capabilities[];
/* Is `name` a tool a toolchain stage can provide (cc, cxx, ar, ...)? */
bool recipes_is_tool(const char *name);
/* Is `name` something else a toolchain stage can provide: llvm_bin (the directory of its
 * LLVM tools) or clang_resource_dir (its clang's resource directory)? They replace the host
 * LLVM's ${llvm_bin}, ${clang}, ${clang_resource_dir} and ${clang_version}. */
bool recipes_is_llvm_dir(const char *name);
/* Is `name` what an emulator stage provides: qemu_user_dir or qemu_system_dir (the directories
 * of its qemu-user and qemu-system binaries)? A target's `emulator:` names such a stage. */
bool recipes_is_emulator_dir(const char *name);
/* Is `name` a variable the engine sets (a target may not override it)? */
bool recipes_reserved_variable(const char *name);
/* Names of all targets/<name>.yaml, sorted. */
int recipes_list_targets(const struct recipes *r, struct strlist *out);

/* Print "path:line:col: message" for a location (used by later phases). */
void location_error(const struct location *where, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
