// The header compiles alone as C++11 and C++17 (tests/c/run.sh, -Wall -Wextra -Werror -pedantic).
#include "sessionkit.h"

int main() { return sk_abi_version() == SK_ABI_VERSION ? 0 : 1; }
