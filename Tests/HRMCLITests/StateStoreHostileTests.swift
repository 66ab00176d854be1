import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// `$XDG_STATE_HOME/hrm` holding something other than hrm's own regular files: hrm must neither
/// hang, nor follow a planted symlink, nor leave its temporary behind.
@Suite struct StateStoreHostileTests {
    /// A fresh state directory, removed afterwards.
    static func withStore(_ body: (StateStore) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrm-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try body(StateStore(directory: root.path))
    }

    static func entries(_ store: StateStore) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: store.directory)) ?? []).sorted()
    }

    /// `body` on a thread of its own, given 5 s: true when it returned in time. When it did not,
    /// `unblock` runs so that the thread can finish.
    static func returnsPromptly(_ body: @escaping @Sendable () -> Void, unblock: () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        if done.wait(timeout: .now() + 5) == .success { return true }
        unblock()
        done.wait()
        return false
    }

    /// A FIFO blocked `open` for good (a writer never comes), deaf to Ctrl-C.
    @Test func aFIFOIsNoMemoryAndDoesNotBlock() throws {
        try Self.withStore { store in
            #expect(mkfifo(store.lastDevicePath, 0o600) == 0)
            let path = store.lastDevicePath
            let prompt = Self.returnsPromptly({ _ = StateStore(directory: store.directory).lastDevice() }) {
                let writer = open(path, O_WRONLY | O_NONBLOCK)
                if writer >= 0 { close(writer) }
            }
            try #require(prompt, "lastDevice() blocked on a FIFO")
            #expect(store.lastDevice() == nil)
            #expect(!store.remember("D2:4B:7E:10:20:30"), "a FIFO is not replaced")
            #expect(Self.entries(store) == ["last-device"], "no temporary left behind")
        }
    }

    /// A directory in place of `last-device`: rename failed and left `last-device.tmp`.
    @Test func aDirectoryIsNoMemoryAndLeavesNoTemporary() throws {
        try Self.withStore { store in
            try FileManager.default.createDirectory(
                atPath: store.lastDevicePath, withIntermediateDirectories: false)
            #expect(store.lastDevice() == nil)
            #expect(!store.remember("D2:4B:7E:10:20:30"))
            #expect(Self.entries(store) == ["last-device"])
        }
    }

    /// A symlink at `last-device` is neither read through nor replaced.
    @Test func aSymlinkIsNotFollowed() throws {
        try Self.withStore { store in
            let elsewhere = store.directory + "/elsewhere"
            try "C0:FF:EE:00:00:01\n".write(toFile: elsewhere, atomically: false, encoding: .utf8)
            #expect(symlink(elsewhere, store.lastDevicePath) == 0)
            #expect(store.lastDevice() == nil)
            #expect(!store.remember("D2:4B:7E:10:20:30"))
            #expect(try String(contentsOfFile: elsewhere, encoding: .utf8) == "C0:FF:EE:00:00:01\n")
            #expect(Self.entries(store) == ["elsewhere", "last-device"])
        }
    }

    /// A symlink planted at `last-device.tmp` was written through (fopen "w" follows it): the
    /// file it points to was overwritten with the address.
    @Test func aSymlinkedTemporaryIsNotWrittenThrough() throws {
        try Self.withStore { store in
            let victim = store.directory + "/victim"
            try "precious\n".write(toFile: victim, atomically: false, encoding: .utf8)
            #expect(symlink(victim, store.lastDevicePath + ".tmp") == 0)
            #expect(store.remember("D2:4B:7E:10:20:30"))
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
            #expect(store.lastDevice() == "D2:4B:7E:10:20:30")
            #expect(Self.entries(store) == ["last-device", "victim"])
        }
    }

    /// A temporary left by a run that crashed does not stop hrm remembering.
    @Test func aStaleTemporaryIsReplaced() throws {
        try Self.withStore { store in
            try "junk".write(toFile: store.lastDevicePath + ".tmp", atomically: false, encoding: .utf8)
            #expect(store.remember("D2:4B:7E:10:20:30"))
            #expect(store.lastDevice() == "D2:4B:7E:10:20:30")
            #expect(Self.entries(store) == ["last-device"])
        }
    }

    /// A huge file is not a file hrm wrote: not read (its first bytes were taken as an address).
    @Test func aHugeFileIsNoMemory() throws {
        try Self.withStore { store in
            try Data(repeating: UInt8(ascii: "A"), count: 10_000_000).write(
                to: URL(fileURLWithPath: store.lastDevicePath))
            #expect(store.lastDevice() == nil)
            #expect(store.remember("D2:4B:7E:10:20:30"), "a regular file is replaced")
            #expect(store.lastDevice() == "D2:4B:7E:10:20:30")
        }
    }

    @Test func aFileWithoutANewlineOrWithSpacesIsRead() throws {
        try Self.withStore { store in
            try "  D2:4B:7E:10:20:30  ".write(
                toFile: store.lastDevicePath, atomically: false, encoding: .utf8)
            #expect(store.lastDevice() == "D2:4B:7E:10:20:30")
        }
    }
}
