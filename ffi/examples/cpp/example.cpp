// A host in C++ with the RAII wrapper sessionkit.hpp (C++11).
//   c++ -std=c++11 example.cpp $(pkg-config --cflags --libs sessionkit)
#include <iostream>

#include "sessionkit.hpp"

int main(int argc, char **argv) {
    try {
        // No options: the home is $SESSIONKIT_HOME, else ~/.sessionkit.
        sessionkit::Store store(argc > 1 ? argv[1] : ".");
        std::string id;
        {
            sessionkit::Session session = store.create_session(R"({"title": "Fix the test"})");
            session.append(R"({"role": "user", "content": "Fix the failing test"})");
            session.append(R"({"role": "assistant", "content": "Looking at it."})");
            id = session.id();
            session.close();  // reports a failed index flush; the destructor would not
        }
        std::cout << store.read_session(id).active_path() << "\n";
        try {
            store.open_session("../escape");
        } catch (const sessionkit::Error &e) {
            std::cout << "refused: " << e.what() << "\n";
            if (e.status() != SK_INVALID_INPUT) return 1;
        }
    } catch (const sessionkit::Error &e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}
