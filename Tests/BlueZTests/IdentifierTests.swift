import BlueZ
import DBus
import Testing

@Suite struct BluetoothAddressTests {
    @Test func parsesEverySpelling() throws {
        let expected = try #require(BluetoothAddress("00:AA:01:01:00:01"))
        #expect(BluetoothAddress("00_aa_01_01_00_01") == expected)
        #expect(BluetoothAddress("00-AA-01-01-00-01") == expected)
        #expect(BluetoothAddress(devicePath: "/org/bluez/hci0/dev_00_AA_01_01_00_01") == expected)
        #expect(expected.description == "00:AA:01:01:00:01")
        #expect(expected.pathComponent == "dev_00_AA_01_01_00_01")
        #expect(expected.bytes == [0x00, 0xAA, 0x01, 0x01, 0x00, 0x01])
    }

    @Test(arguments: [
        "", "00:AA:01:01:00", "00:AA:01:01:00:0G", "00:AA-01:01:00:01", "00:AA:01:01:00:011", "Lab HRM",
    ])
    func rejectsMalformed(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func devicePathNeedsADeviceComponent() {
        #expect(BluetoothAddress(devicePath: "/org/bluez/hci0") == nil)
        #expect(BluetoothAddress(devicePath: "/org/bluez/hci0/dev_00_AA_01_01_00_01/service0015") == nil)
    }
}

@Suite struct BluetoothUUIDTests {
    @Test func shortAndLongForms() throws {
        let hr = BluetoothUUID(0x180D)
        #expect(hr.description == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(hr.shortDescription == "180d")
        #expect(hr.shortValue == 0x180D)
        #expect(BluetoothUUID("180D") == hr)
        #expect(BluetoothUUID("0x180d") == hr)
        #expect(BluetoothUUID("0000180d") == hr)
        #expect(BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB") == hr)
        #expect(BluetoothUUID("0X180D") == hr)
        #expect(BluetoothUUID("0000180d-0000-1000-8000-00805f9b34fb"[...]) == hr)
        // Each group lands in its place.
        let vendor = try #require(BluetoothUUID("0x12345678-9ABC-def0-1234-56789abcdef0"))
        #expect(vendor.high == 0x1234_5678_9ABC_DEF0)
        #expect(vendor.low == 0x1234_5678_9ABC_DEF0)
    }

    @Test func vendorUUIDsStayLong() throws {
        let vendor = try #require(BluetoothUUID("12345678-1234-5678-1234-56789abcdef0"))
        #expect(vendor.shortValue == nil)
        #expect(vendor.shortDescription == "12345678-1234-5678-1234-56789abcdef0")
        // A 32-bit assigned number is not a 16-bit one.
        #expect(BluetoothUUID(uint32: 0x1234_5678).shortValue == nil)
    }

    @Test(arguments: [
        "", "18d", "180g", "0000180d-0000-1000-8000-00805f9b34f", "0000180d00000-1000-8000-00805f9b34fb",
        "0x", "+18d", "0x180d-", "0000180d-0000-1000-8000-00805f9b34fg",
        "0000180d-0000-1000-8000_00805f9b34fb",
        "１８０ｄ", "0000180d-0000-1000-8000-00805f9b34fbb",
    ])
    func rejectsMalformed(text: String) {
        #expect(BluetoothUUID(text) == nil)
    }
}

@Suite struct BlueZPathTests {
    /// A path from outside the process is checked: a bad one throws a typed error, never traps.
    @Test(arguments: [
        "", "org/bluez", "/org/bluez/", "/org//bluez", "/org/bluez/hci0/dev_AA-BB", "/org/blüez",
    ])
    func invalidPathsThrow(text: String) {
        #expect(throws: BlueZError.self) { try DevicePath(text) }
        do {
            _ = try AttributePath(text)
        } catch {
            #expect(error.code == .invalidPath)
        }
    }

    @Test func validPathsKeepTheirText() throws {
        let device = try DevicePath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF")
        let characteristic = try AttributePath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service0015/char0016")
        #expect(device.description == "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF")
        #expect(characteristic.isDescendant(of: device))
        #expect(!device.isDescendant(of: characteristic))
    }

    /// bluetoothd's error names map to cases; the routine Connect failures are recognised by case.
    @Test func bluezRepliesByCase() {
        #expect(BlueZReply(errorName: "org.bluez.Error.InProgress") == .inProgress)
        #expect(BlueZReply(errorName: "org.bluez.Error.NotPermitted") == .notPermitted)
        #expect(BlueZReply(errorName: "org.bluez.Error.Unheard") == nil)
        #expect(BlueZReply(errorName: "org.freedesktop.DBus.Error.Failed") == nil)
        for reply in BlueZReply.allCases {
            #expect(BlueZReply(errorName: "org.bluez.Error.\(reply.rawValue)") == reply)
        }
        let abort = BlueZError(
            .bluez, "Failed: le-connection-abort-by-local", dbusName: "org.bluez.Error.Failed")
        #expect(abort.reply == .failed)
        #expect(abort.isRoutineConnectFailure)
        #expect(BlueZError(.bluez, "x", dbusName: "org.bluez.Error.InProgress").isRoutineConnectFailure)
        #expect(
            !BlueZError(.bluez, "Failed: 0x80", dbusName: "org.bluez.Error.Failed").isRoutineConnectFailure)
        #expect(!BlueZError(.timeout, "x").isRoutineConnectFailure)
    }
}

/// One error-code style across the layers: what a user or a script sees as `code` is snake_case.
@Suite struct ErrorCodeStyleTests {
    static func isSnakeCase(_ code: String) -> Bool {
        !code.isEmpty && code.first?.isLetter == true
            && code.allSatisfy { ($0.isASCII && $0.isLowercase) || $0.isNumber || $0 == "_" }
    }

    @Test func dbusAndBlueZCodesAreSnakeCase() {
        for code in DBusError.Code.allCases { #expect(Self.isSnakeCase(code.rawValue), "\(code)") }
        for code in BlueZError.Code.allCases { #expect(Self.isSnakeCase(code.rawValue), "\(code)") }
        #expect(DBusError.Code.noReply.rawValue == "no_reply")
        #expect(!Self.isSnakeCase("noReply"))
    }
}
