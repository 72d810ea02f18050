/*
 * Runs a fuzz target's entry point on files, so seed corpora run as
 * ordinary tests under any compiler. Arguments: files or directories
 * (one level). Prints TAP, one line per directory or file argument.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data = NULL;
	size_t size = 0, cap = 0, n;

	if (f == NULL) {
		printf("# cannot open %s\n", path);
		return -1;
	}
	for (;;) {
		if (size == cap) {
			unsigned char *grown;
			cap = cap ? cap * 2 : 4096;
			grown = realloc(data, cap);
			if (grown == NULL) {
				free(data);
				fclose(f);
				return -1;
			}
			data = grown;
		}
		n = fread(data + size, 1, cap - size, f);
		if (n == 0)
			break;
		size += n;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

static int
run_dir(const char *dir, int *count)
{
	struct dirent **names;
	char path[4096];
	int n = scandir(dir, &names, NULL, alphasort), rv = 0;

	if (n < 0) {
		printf("# cannot read %s\n", dir);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			if (run_file(path) < 0)
				rv = -1;
			(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return rv;
}

int
main(int argc, char **argv)
{
	int failed = 0;

	printf("1..%d\n", argc - 1);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int count = 0, rv;

		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			rv = run_dir(argv[i], &count);
		else {
			rv = run_file(argv[i]);
			count = 1;
		}
		printf("%s %d - %s (%d inputs)\n", rv == 0 && count > 0 ? "ok" : "not ok",
		       i, argv[i], count);
		failed |= rv != 0 || count == 0;
	}
	return failed;
}
