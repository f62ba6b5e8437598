/* SPDX-License-Identifier: MIT */
/* file.h - small whole-file reads (procfs, sysfs, tracefs), and rtdiag's
 * one reader of each file of a process under /proc (proc.c, maps.c). */
#ifndef RTD_COMMON_FILE_H
#define RTD_COMMON_FILE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * rtd_read_small - read a small file (procfs, sysfs, tracefs) whole
 * @path: the file
 * @buf: where its bytes go, NUL-terminated
 * @len: size of @buf; at most @len - 1 bytes are read (a longer file is
 *       cut there: the callers' files have a known small size)
 *
 * Reads until end of file, retrying on EINTR. Returns the number of bytes
 * read (<= @len - 1, so it fits an int for the buffers this is for), or
 * -errno when the file cannot be opened or a read fails.
 */
int rtd_read_small(const char *path, char *buf, size_t len);

/*
 * rtd_write_errno - why a write to a stdio stream failed, right after it
 * did (a short fwrite, a non-zero fflush, ferror set): -errno as the
 * failed write(2) left it (-ENOSPC on a full disk, -EIO on a bad one), or
 * -EIO when errno says nothing. Writers return this, never a blanket EIO,
 * so "No space left on device" reaches the person.
 */
static inline int rtd_write_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/*
 * rtd_proc_stat - a process's state and start time from /proc/PID/stat
 * @pid: the process
 * @state: receives its state letter ('R', 'S', 'Z' for a zombie, ...);
 *         may be NULL
 * @start: receives its start time in clock ticks since boot (field 22):
 *         with the pid it names one process even when pids are reused;
 *         may be NULL
 *
 * The command may hold spaces and parentheses: the fields count from the
 * last ')'. Returns 0, -ENOENT when there is no such process, or another
 * negative errno / -RTD_E_FORMAT.
 */
int rtd_proc_stat(pid_t pid, char *state, unsigned long long *start);

/*
 * rtd_proc_tasks - each thread of a process (/proc/PID/task), as listed
 * @pid: the process
 * @fn: called with each thread id; a non-zero return stops the listing
 * @ctx: passed to @fn
 *
 * Returns: the threads given, @fn's non-zero value, or -errno when the
 * list cannot be read (-ENOENT: no such process).
 */
int rtd_proc_tasks(int pid, int (*fn)(int tid, void *ctx), void *ctx);

/*
 * rtd_proc_comm - a process's or thread's command name (/proc/.../comm)
 * @pid: the process
 * @tid: one of its threads, or 0 for the process
 * @out: gets the name without its newline, NUL-terminated (cut to @len)
 * @len: size of @out
 *
 * Returns: the bytes the file held (its newline counted: > 0 whenever the
 * file was read whole), or -errno when it cannot be read (@out is then
 * unchanged when the file could not be opened: a process that is gone).
 */
int rtd_proc_comm(int pid, int tid, char *out, size_t len);

/*
 * rtd_proc_root_path - a path as a process sees it: /proc/PID/root, then
 * @fmt (a path from the process's own root, "/tmp/...")
 * @out: gets the path
 * @n: size of @out
 * @pid: the process (its mount namespace and chroot)
 * @fmt: printf format of the rest, starting with '/'
 *
 * Returns: 0, or -ENAMETOOLONG when it does not fit @n (@out is then "",
 * never a cut path that names another file).
 */
int rtd_proc_root_path(char *out, size_t n, pid_t pid, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * rtd_proc_open_in_root - open a file a process maps or names, as it sees
 * it (through /proc/PID/root: its container's file), else as we do (its
 * root is not ours to read: another user's process, or it is gone)
 * @pid: the process, or <= 0 for our own view only
 * @path: the path in the process's view
 *
 * Returns: a read-only, close-on-exec descriptor, or -1 with errno set
 * (EMFILE from the first open is returned at once).
 */
int rtd_proc_open_in_root(pid_t pid, const char *path);

/*
 * rtd_proc_map_file_open - open the file behind a mapping of a process,
 * even one deleted or replaced since it was mapped
 * (/proc/PID/map_files/START-END: while the process lives, and to a
 * reader with CAP_SYS_ADMIN or ptrace rights over it)
 * @pid: the process
 * @start: the mapping's start, as /proc/PID/maps gives it
 * @end: its end
 *
 * Returns: a read-only, close-on-exec descriptor, or -1 with errno set.
 */
int rtd_proc_map_file_open(pid_t pid, uint64_t start, uint64_t end);

/*
 * rtd_proc_cgroup_pick - the cgroup path in /proc/PID/cgroup's text
 * @text: the file's text, NUL-terminated
 * @out: gets the path of the cgroup v2 line ("0::PATH") wherever it is
 *       (a hybrid layout lists v1 hierarchies first), else of the first
 *       v1 hierarchy, else ""; cut to @len - 1 bytes
 * @len: size of @out (> 0)
 */
void rtd_proc_cgroup_pick(const char *text, char *out, size_t len);

/*
 * rtd_proc_cgroup - a process's cgroup path, as rtd_proc_cgroup_pick()
 * picks it from PROC_DIR/PID/cgroup
 * @proc_dir: the procfs root, NULL for "/proc"
 * @pid: the process
 * @out: gets the path ("" when the file has none or cannot be read)
 * @len: size of @out
 *
 * Read a line at a time, however many hierarchies a hybrid layout lists
 * before v2's line.
 *
 * Returns: 0, -errno when the file cannot be read (-ENOENT: gone), or
 * -RTD_E_CAP for a line longer than PATH_MAX and its controllers.
 */
int rtd_proc_cgroup(const char *proc_dir, pid_t pid, char *out, size_t len);

/*
 * rtd_proc_comm_at - rtd_proc_comm() under a procfs root
 * @proc_dir: the procfs root, NULL for "/proc" (the agent reads a
 *            configured one)
 * @pid: the process
 * @tid: one of its threads, or 0 for the process
 * @out: as rtd_proc_comm()
 * @len: size of @out
 *
 * Returns: as rtd_proc_comm(), or -ENAMETOOLONG for a root too long.
 */
int rtd_proc_comm_at(const char *proc_dir, int pid, int tid, char *out, size_t len);

/*
 * rtd_proc_ns_pid - the pid @pid has in its own (innermost) pid namespace
 * @pid: the process, as this namespace sees it
 *
 * The last field of /proc/PID/status's NSpid line: the pid a containerized
 * runtime names its files by (a .NET socket, a perf map). Returns @pid when
 * there is no such line or the file cannot be read.
 */
pid_t rtd_proc_ns_pid(pid_t pid);

/*
 * rtd_proc_status_num - a number of /proc/PID/status ("Tgid", "PPid", ...)
 * @pid: the process, or any thread of it (then it is that thread's line)
 * @field: the field's name, without its ':'
 *
 * Returns: its value (>= 0), -ENOENT when the process or the field is not
 * there, -RTD_E_FORMAT when it is not a number, or another -errno.
 */
long long rtd_proc_status_num(pid_t pid, const char *field);

/*
 * rtd_proc_exe - the file a process runs: /proc/PID/exe's link, as is (a
 * file replaced since ends in " (deleted)")
 * @proc_dir: the procfs root, NULL for "/proc" (the agent reads a
 *            configured one)
 * @pid: the process
 * @out: gets the path, NUL-terminated ("" when it cannot be read)
 * @len: size of @out (a longer path is cut to @len - 1)
 *
 * Returns: the bytes stored, or -errno (-EACCES: another user's process;
 * -ENOENT: gone, or a kernel thread).
 */
int rtd_proc_exe(const char *proc_dir, pid_t pid, char *out, size_t len);

/*
 * rtd_proc_cmdline - a process's arguments, NUL-separated as the kernel
 * keeps them (/proc/PID/cmdline)
 * @proc_dir: the procfs root, NULL for "/proc"
 * @pid: the process
 * @buf: gets them, with one more NUL after the bytes read
 * @len: size of @buf (more arguments than fit are cut)
 *
 * Returns: the bytes read (0 for a zombie or a kernel thread), or -errno.
 */
int rtd_proc_cmdline(const char *proc_dir, pid_t pid, char *buf, size_t len);

/*
 * rtd_proc_env - a variable of a process's environment, as getenv() in it
 * @pid: the process
 * @name: the variable's name
 * @out: gets its value, NUL-terminated (cut to @len - 1 bytes)
 * @len: size of @out
 *
 * An environment may hold a name twice (execve passes envp as given):
 * this is the FIRST "NAME=" entry of /proc/PID/environ, the one glibc's
 * getenv() and the .NET PAL's environment copy (FindEnvVarValue) return.
 * The environment is the one the process was started with.
 *
 * Returns: the value's length (>= @len: it was cut), -ENOENT when there
 * is no such entry, or another -errno (-EACCES: another user's process).
 */
int rtd_proc_env(pid_t pid, const char *name, char *out, size_t len);

/*
 * rtd_proc_tmpdir - the directory a .NET runtime in @pid puts its
 * diagnostic socket and perf map in, as it names it
 * @pid: the process
 * @out: gets its first TMPDIR without a trailing '/' ("/" stays), or
 *       "/tmp" when it has none, an empty one (GetTempPathA reads that as
 *       none), a relative one, or one longer than @len
 * @len: size of @out (>= 5)
 *
 * Returns: 0 (@out is always set), or -errno when the environment could
 * not be read (@out is "/tmp" then too).
 */
int rtd_proc_tmpdir(pid_t pid, char *out, size_t len);

/*
 * rtd_proc_alive - is @pid the live process that started at @start?
 * @pid: the process
 * @start: its start time (rtd_proc_stat()), or 0 for any
 *
 * A zombie ('Z', 'X') has ended although kill(pid, 0) still succeeds on
 * it: it is not alive.
 */
bool rtd_proc_alive(pid_t pid, unsigned long long start);

/**
 * rtd_proc_wait_gone - wait, bounded, for a process to be gone
 * @pid: the process
 * @start: its start time (see rtd_proc_alive()), 0 for any
 * @ms: at most this long
 *
 * A killed process tears down its threads, files and memory before it is
 * a zombie: meanwhile rtd_proc_alive() is still true though nothing in it
 * answers any more. Waits on a pidfd (readable once the process has
 * exited), or polls every 10 ms without one.
 *
 * Returns: true when the process is gone (exited, reaped or another's pid).
 */
bool rtd_proc_wait_gone(pid_t pid, unsigned long long start, int ms);

/*
 * struct rtd_maps_entry - one line of /proc/PID/maps
 * @start: first address of the mapping
 * @end: one past its last
 * @pgoff: where in its file it starts
 * @ino: the file's inode (0 for none)
 * @dev_major: the file's device
 * @dev_minor: the file's device
 * @perms: "rwxp" as the kernel shows them ('-' for off, 's' shared)
 * @exec: @perms[2] is 'x'
 * @path: its file, "[vdso]", "[heap]", ...: borrowed, valid during the
 *        callback, not NUL-terminated ("" for none)
 * @path_len: the bytes of @path
 */
struct rtd_maps_entry {
	uint64_t start, end, pgoff, ino;
	unsigned dev_major, dev_minor;
	char perms[4];
	bool exec;
	const char *path;
	size_t path_len;
};
/* Called per line; a non-zero return stops the reading and is returned. */
typedef int (*rtd_maps_fn)(const struct rtd_maps_entry *e, void *ctx);

/* The longest maps line rtd_maps_read_fd() takes: a path of PATH_MAX
 * bytes, " (deleted)" and the fields before it. */
#define RTD_MAPS_LINE_MAX 8192u

/*
 * rtd_maps_parse - parse /proc/PID/maps text (untrusted: fuzzed)
 * @buf: the text (no NUL needed)
 * @len: its bytes
 * @fn: called per well-formed line (empty lines are skipped)
 * @ctx: passed to @fn
 * @bad_line: gets the 1-based number of the bad line, 0 when none
 *
 * Returns: 0, @fn's non-zero value, or -RTD_E_FORMAT at the first bad
 * line.
 */
int rtd_maps_parse(const char *buf, size_t len, rtd_maps_fn fn, void *ctx,
		   size_t *bad_line);

/*
 * rtd_maps_read_fd - rtd_maps_parse() over a file read a piece at a time
 * @fd: an open maps file (rtd_proc_maps_open())
 * @fn: called per line
 * @ctx: passed to @fn
 * @bad_line: gets the number of a bad or too long line, else 0
 *
 * Memory is one buffer of RTD_MAPS_LINE_MAX bytes, whatever the file's
 * length. Returns: 0, @fn's non-zero value, -RTD_E_FORMAT, -RTD_E_CAP (a
 * line longer than RTD_MAPS_LINE_MAX), or -errno.
 */
int rtd_maps_read_fd(int fd, rtd_maps_fn fn, void *ctx, size_t *bad_line);

/*
 * rtd_proc_maps_open - open /proc/PID/maps (/proc/self/maps for @pid 0)
 *
 * Returns: a file descriptor (close-on-exec), or -errno (-ENOENT: gone).
 */
int rtd_proc_maps_open(pid_t pid);

/*
 * rtd_proc_maps - each mapping of a process, in address order
 * @pid: the process, 0 for this one
 * @fn: called per mapping
 * @ctx: passed to @fn
 * @bad_line: as rtd_maps_read_fd()
 *
 * Returns: as rtd_maps_read_fd(), or -errno when the file cannot be
 * opened.
 */
int rtd_proc_maps(pid_t pid, rtd_maps_fn fn, void *ctx, size_t *bad_line);

/* Called with whole lines (@len bytes, the last one perhaps without its
 * '\n'), *@lineno the lines before them, to be counted on. */
typedef int (*rtd_lines_fn)(const char *buf, size_t len, void *ctx, size_t *lineno);

/*
 * rtd_lines_read_fd - a line-based text file read a piece at a time
 * @fd: the file
 * @max_line: the buffer, the longest line taken
 * @parse: called with the whole lines of each piece
 * @ctx: passed to @parse
 * @bad_line: gets *lineno when @parse returned -RTD_E_FORMAT, or the
 *            number of a line longer than @max_line; else 0
 *
 * Returns: 0, @parse's non-zero value, -RTD_E_CAP (a line too long),
 * -ENOMEM or -errno.
 */
int rtd_lines_read_fd(int fd, size_t max_line, rtd_lines_fn parse, void *ctx,
		      size_t *bad_line);

/* One line of /proc/kallsyms: "ADDRESS TYPE NAME" and, for a module's
 * symbol, "\t[MODULE]". @name and @mod point into the text (no NUL). */
struct rtd_ksym {
	uint64_t addr;
	char type;
	const char *name, *mod; /* @mod NULL for the kernel's own */
	size_t name_len, mod_len;
	size_t line; /* 1-based: the order the kernel lists them in */
};
/* Called per line; a non-zero return stops the reading and is returned
 * (-RTD_E_FORMAT: the line is said bad). */
typedef int (*rtd_ksym_fn)(const struct rtd_ksym *k, void *ctx);

/* The longest kallsyms line rtd_kallsyms_read() takes. */
#define RTD_KALLSYMS_LINE_MAX 8192u
/* The kernel's own: what a NULL path reads. */
#define RTD_KALLSYMS_PATH "/proc/kallsyms"

/*
 * rtd_kallsyms_parse - parse kallsyms text (untrusted: a user may name
 * the file; fuzzed)
 * @buf: the text (no NUL needed)
 * @len: its bytes
 * @fn: called per well-formed line (empty lines skipped); hidden
 *      addresses (0, kernel.kptr_restrict) are given as they are
 * @ctx: passed to @fn
 * @bad_line: gets the 1-based number of the bad line, 0 when none
 *
 * Returns: 0, @fn's non-zero value, or -RTD_E_FORMAT at the first bad
 * line (the lines before it were given).
 */
int rtd_kallsyms_parse(const char *buf, size_t len, rtd_ksym_fn fn, void *ctx,
		       size_t *bad_line);

/*
 * rtd_kallsyms_read - each line of a kallsyms file, read a piece at a time
 * @path: the file, NULL for /proc/kallsyms
 * @fn, @ctx, @bad_line: as rtd_kallsyms_parse()
 *
 * Memory is one buffer of RTD_KALLSYMS_LINE_MAX bytes. Returns: as
 * rtd_kallsyms_parse(), -RTD_E_CAP (a line too long), or -errno.
 */
int rtd_kallsyms_read(const char *path, rtd_ksym_fn fn, void *ctx, size_t *bad_line);

#endif /* RTD_COMMON_FILE_H */
