/* SPDX-License-Identifier: MIT */
/*
 * opt.h - one table-driven option layer for every rtdiag command.
 *
 * A command describes itself once, in a struct cli_cmd: its name, its
 * positional arguments, a paragraph of help and a table of options (long
 * name, short name, argument kind, help line). From that one table the
 * layer parses argv, checks and converts values (durations, sizes, pid
 * lists, integers, choices), refuses unknown, incomplete and repeated
 * options with one set of messages, and prints `--help`. So "--duration
 * 1.5", "1.5s", "200ms" and "00:00:01.5" mean the same in every command.
 *
 * Use:
 *
 *	static const struct cli_opt opts[] = {
 *		{OPT_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE", "write to FILE"},
 *		{OPT_DUR, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE,
 *		 "TIME", "stop after TIME"},
 *		{0},
 *	};
 *	const struct cli_cmd cmd = {"perf trace", "[-- COMMAND [ARGS]]", ...};
 *	struct cli_parser p;
 *	struct cli_val v;
 *	int id;
 *	cli_opt_init(&p, &cmd, argc, argv);
 *	while ((id = cli_opt_next(&p, &v)) > 0)
 *		switch (id) { case OPT_OUT: out = v.str; break; ... }
 *	if (id < 0)
 *		return cli_opt_exit(id);      // usage error (2) or --help (0)
 *	// positional arguments: p.pos[0 .. p.npos-1]; after "--": p.rest
 */
#ifndef RTD_CLI_OPT_H
#define RTD_CLI_OPT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* What an option's argument is. */
enum cli_arg {
	CLI_ARG_NONE,     /* a flag: no argument */
	CLI_ARG_STR,      /* any text */
	CLI_ARG_INT,      /* a decimal (or 0x hex) integer: v.i */
	CLI_ARG_DOUBLE,   /* a number: v.d */
	CLI_ARG_DURATION, /* "1.5" (seconds), "1.5s", "200ms", "10us", "2m",
			     "1h", "hh:mm:ss[.f]", "d:hh:mm:ss": v.d seconds,
			     v.ns nanoseconds */
	CLI_ARG_SIZE,     /* "4096", "64k", "8M", "1G" (powers of 1024, an
			     optional B/iB): v.u bytes */
	CLI_ARG_PIDS,     /* "123" or "123,456": v.pids, v.npids */
	CLI_ARG_CHOICE,   /* one of the words of meta, "text|json|go-debug":
			     v.i is its index */
};

/* Option flags. */
enum {
	CLI_OPT_REPEAT = 1u << 0,   /* may be given more than once */
	CLI_OPT_POSITIVE = 1u << 1, /* numbers and durations must be > 0 */
	CLI_OPT_HIDDEN = 1u << 2,   /* accepted but not listed in --help */
	/* an old spelling (hidden too): its help is the spelling now, and
	 * taking it prints one line saying so on stderr; it returns the id
	 * of the option it stands for (docs/options.md) */
	CLI_OPT_OLD = 1u << 3,
	/* an option that takes a value now and was a flag before ("--top"
	 * then, "--top N" now): given alone (nothing after it, or an option,
	 * or a word that is not its kind) it is taken with v.str NULL and a
	 * one-line notice; long spelling only */
	CLI_OPT_WAS_FLAG = 1u << 4,
};

/**
 * struct cli_opt - one option of a command
 * @id: what cli_opt_next() returns for it (> 0); 0 ends the table
 * @name: long name without "--", or NULL
 * @shortname: one-letter name without "-", or 0
 * @arg: kind of argument
 * @flags: CLI_OPT_* bits
 * @meta: the argument's name in help ("FILE"); for CLI_ARG_CHOICE the
 *        choices separated by '|'
 * @help: one line of help
 * @min: smallest value of an INT/DOUBLE/DURATION (seconds) option, when
 *       min < max
 * @max: largest value, when min < max
 */
struct cli_opt {
	int id;
	const char *name;
	char shortname;
	enum cli_arg arg;
	unsigned flags;
	const char *meta;
	const char *help;
	double min, max;
};

/* An old spelling of option ID (docs/options.md): accepted, hidden from
 * --help, and taking it prints that NOW is the spelling to use. */
#define CLI_OLD(ID, NAME, SHORT, ARG, FLAGS, META, NOW, MIN, MAX)             \
	{ID, NAME, SHORT, ARG, (FLAGS) | CLI_OPT_OLD | CLI_OPT_HIDDEN, META,  \
	 NOW, MIN, MAX}

/* Command flags. */
enum {
	CLI_CMD_COMMAND = 1u << 0, /* takes "-- COMMAND [ARGS]" to start */
};

/**
 * struct cli_cmd - a command: what the parser and --help know of it
 * @name: full name as typed, "gotrace cat"
 * @args: synopsis of its positional arguments, "FILE|-", or NULL
 * @summary: what it does, one or more lines (printed after the usage)
 * @opts: its options, ended by an entry with id 0; may be NULL
 * @min_pos: fewest positional arguments
 * @max_pos: most positional arguments (-1: any number)
 * @flags: CLI_CMD_* bits
 * @run: the command itself: argv[0] is the command's last word
 * @details: text printed after the option list (examples, notes), or NULL
 */
struct cli_cmd {
	const char *name;
	const char *args;
	const char *summary;
	const struct cli_opt *opts;
	int min_pos, max_pos;
	unsigned flags;
	int (*run)(int argc, char **argv);
	const char *details;
};

#define CLI_MAX_PIDS 256
#define CLI_MAX_POS 64
#define CLI_MAX_OPTS 128

/**
 * struct cli_val - the converted argument of one option
 * @str: the argument as typed (NULL for a flag)
 * @i: CLI_ARG_INT value, or CLI_ARG_CHOICE index
 * @u: CLI_ARG_SIZE value in bytes
 * @d: CLI_ARG_DOUBLE value, or CLI_ARG_DURATION in seconds
 * @ns: CLI_ARG_DURATION in nanoseconds
 * @pids: CLI_ARG_PIDS list; valid until the next cli_opt_next()
 * @npids: its length
 * @opt: the table entry that matched
 */
struct cli_val {
	const char *str;
	long long i;
	uint64_t u;
	double d;
	int64_t ns;
	const pid_t *pids;
	size_t npids;
	const struct cli_opt *opt;
};

/* Parser state; fill with cli_opt_init(). */
struct cli_parser {
	const struct cli_cmd *cmd;
	int argc;
	char **argv;
	int i;               /* next argv index */
	const char *cluster; /* rest of a "-abc" cluster, or NULL */
	char typed;          /* the short name just read, 0 for a long one */
	bool ended;          /* "--" seen */
	unsigned char seen[CLI_MAX_OPTS];
	pid_t pids[CLI_MAX_PIDS];
	/* results */
	char *pos[CLI_MAX_POS]; /* positional arguments, in order */
	int npos;
	char **rest; /* after "--" for a CLI_CMD_COMMAND command, else NULL */
	int nrest;
};

/* cli_opt_next() results besides an option id. */
enum { CLI_OPT_DONE = 0, CLI_OPT_USAGE = -1, CLI_OPT_HELP = -2 };

/* Start parsing argv[1..argc-1] (argv[0] is the command's name). */
void cli_opt_init(struct cli_parser *p, const struct cli_cmd *cmd, int argc,
		  char **argv);

/*
 * The next option: its id (> 0) with its converted value in *v;
 * CLI_OPT_DONE when every argument is read (positional ones are then in
 * p->pos and checked against min_pos/max_pos; "-- COMMAND" in p->rest);
 * CLI_OPT_USAGE after printing a usage error; CLI_OPT_HELP after printing
 * the command's help for -h/--help.
 */
int cli_opt_next(struct cli_parser *p, struct cli_val *v);

/* The exit code for a negative cli_opt_next() result: 2 for a usage
 * error, 0 for --help. */
int cli_opt_exit(int rc);

/* Print a usage error about this command ("rtdiag CMD: MESSAGE" and where
 * to read more); returns CLI_USAGE. For values a command checks itself. */
int cli_cmd_usage(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print a command's help: usage line, summary, options, details. */
void cli_cmd_help(FILE *f, const struct cli_cmd *cmd);

/* Print a command's option table as data, one option a line:
 * "COMMAND\t-S\t--LONG\tKIND\tFLAGS\tMETA[\tNOW]" ("-" for none; KIND none,
 * str, int, double, duration, size, pids, choice; FLAGS a comma list of
 * repeat, hidden, old, was-flag; NOW, for an old spelling, what to say
 * now). `rtdiag help --options` prints every command's;
 * tests/cli/test_options.sh checks the vocabulary of docs/options.md. */
void cli_cmd_dump_opts(FILE *f, const struct cli_cmd *cmd);

/* Print the one-line notice of an old spelling: "rtdiag CMD: note: OLD is
 * an old spelling here; say NOW (docs/options.md)". */
void cli_cmd_old_spelling(const struct cli_cmd *cmd, const char *old,
			  const char *now);

/* After a flag that took a value before (perf's "-g" alone, rtdiag's old
 * "-g dwarf"): when the next word is one of CHOICES ("fp|dwarf|none"),
 * take it as the old spelling's value, print the notice that "NOW WORD"
 * is the spelling to use, and return its index; else -1 (nothing taken). */
int cli_opt_old_word(struct cli_parser *p, const char *choices, const char *old,
		     const char *now);

/*
 * Value converters, also for values that do not come from an option (a
 * provider's level, a config file). Each returns 0, or -1 when the text
 * is not of its form (nothing is printed).
 */
int cli_parse_duration(const char *s, double *seconds, int64_t *ns);
int cli_parse_size(const char *s, uint64_t *bytes);
int cli_parse_int(const char *s, long long *v);

/*
 * A command group ("gotrace") made of cli_cmds: dispatch argv[1] to its
 * command, and print the group's help or one command's. cli_group_run
 * answers -h/--help anywhere in a command's arguments before "--".
 */
int cli_group_run(const char *group, const struct cli_cmd *const *cmds,
		  int argc, char **argv);
bool cli_group_help(FILE *f, const char *group, const char *summary,
		    const struct cli_cmd *const *cmds, const char *sub);

#endif /* RTD_CLI_OPT_H */
