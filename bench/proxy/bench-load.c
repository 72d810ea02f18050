/*
 * bench-load: loads one PKCS#11 module and initializes it once, for
 * callgrind to count what that costs:
 *
 *   valgrind --tool=callgrind --toggle-collect=load_init_finalize \
 *       bench-load MODULE
 *
 * load_init_finalize does dlopen, C_GetFunctionList, C_Initialize (OS
 * locking) and C_Finalize: what a program pays for loading a module it
 * may not use. Exit status 0 when every call succeeded.
 */
#include <p11glue/pkcs11.h>

#include <dlfcn.h>
#include <stdio.h>

int load_init_finalize(const char *path);

__attribute__((noinline)) int
load_init_finalize(const char *path)
{
	CK_C_INITIALIZE_ARGS args = { .flags = CKF_OS_LOCKING_OK };
	CK_FUNCTION_LIST_PTR f = NULL;
	CK_C_GetFunctionList get;
	CK_RV rv;
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (dl == NULL) {
		fprintf(stderr, "bench-load: %s\n", dlerror());
		return 1;
	}
	get = (CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList");
	if (get == NULL || get(&f) != CKR_OK || f == NULL) {
		fprintf(stderr, "bench-load: %s: no C_GetFunctionList\n", path);
		return 1;
	}
	rv = f->C_Initialize(&args);
	if (rv == CKR_OK)
		rv = f->C_Finalize(NULL);
	if (rv != CKR_OK) {
		fprintf(stderr, "bench-load: %s: CK_RV 0x%08lx\n", path, rv);
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "Usage: bench-load MODULE\n");
		return 2;
	}
	return load_init_finalize(argv[1]);
}
