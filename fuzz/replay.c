/* SPDX-License-Identifier: MIT */
/*
 * replay.c - run a libFuzzer target over files, without libFuzzer.
 *
 * Usage: fuzz_NAME_replay DIR_OR_FILE...
 * Each regular file (directories are walked one level) is read whole and
 * passed to LLVMFuzzerTestOneInput. A crash or sanitizer report fails the
 * test; the target itself decides nothing else. Prints "N passed, 0 failed".
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	if (!buf)
		return -1;
	/* an exact-size copy, so ASan sees reads one past the end */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned ran = 0, failed = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: no such corpus\n", argv[i]);
			failed++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				failed++;
			else
				ran++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (stat(path, &st) || !S_ISREG(st.st_mode))
				continue;
			if (run_file(path))
				failed++;
			else
				ran++;
		}
		if (d)
			closedir(d);
	}
	printf("%u passed, %u failed\n", ran, failed);
	if (ran == 0 && failed == 0) {
		fprintf(stderr, "replay: empty corpus\n");
		return 1;
	}
	return failed ? 1 : 0;
}
