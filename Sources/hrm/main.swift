import HRMCLI
import Threads

// Not an `async` main: see MainThread (an async main's exit through dispatch_main costs pages).
MainThread.run { await HRM.run(arguments: Array(CommandLine.arguments.dropFirst())) }
