import Glibc
import Threads

// Not an `async` main (ServeMain is not `@main`): see MainThread, as in hrm's.
MainThread.run {
    await ServeMain.main()
    exit(0)
}
