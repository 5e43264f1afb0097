/* The header compiles alone as C99 and C11 (tests/c/run.sh, -Wall -Wextra -Werror -pedantic). */
#include "sessionkit.h"

int main(void) { return sk_abi_version() == SK_ABI_VERSION ? 0 : 1; }
