import DBus
import Testing

@Suite struct NameAndValueTests {
    // Strings go through variables: `T("literal")` would use the (trapping) literal initialiser.
    @Test func namesAreValidated() {
        func ok<T>(_ make: (String) throws -> T, _ text: String) -> Bool { (try? make(text)) != nil }
        for good in ["/org/bluez/hci0", "/", "/a_1/B"] {
            #expect(ok({ try ObjectPath($0) }, good), "\(good)")
        }
        for bad in ["", "org", "/org/", "//a", "/a-b", "/a b", "/a\u{0}"] {
            #expect(!ok({ try ObjectPath($0) }, bad), "\(bad.debugDescription)")
        }
        for good in [":1.42", "org.bluez", "org.bluez-x.a_b"] {
            #expect(ok({ try BusName($0) }, good), "\(good)")
        }
        for bad in ["", "org", "org..bluez", "1org.bluez", "org.bl uez", ".org.bluez", ":"] {
            #expect(!ok({ try BusName($0) }, bad), "\(bad.debugDescription)")
        }
        #expect(ok({ try InterfaceName($0) }, "org.bluez.Device1"))
        #expect(!ok({ try InterfaceName($0) }, "org.bluez-x.Device1"))
        #expect(!ok({ try InterfaceName($0) }, String(repeating: "a.", count: 128) + "b"))
        #expect(ok({ try MemberName($0) }, "Connect"))
        #expect(!ok({ try MemberName($0) }, "1Connect"))
        #expect(!ok({ try MemberName($0) }, "Con.nect"))
        #expect(ok({ try ErrorName($0) }, "org.bluez.Error.InProgress"))
        #expect(!ok({ try ErrorName($0) }, "InProgress"))
        let invalid = #expect(throws: DBusError.self) { try ObjectPath(String("/a/")) }
        #expect(invalid?.code == .invalidName)
        #expect(invalid?.message.contains("/a/") == true)
        let device: ObjectPath = "/org/bluez/hci0/dev_1"
        #expect(device.isInNamespace("/org/bluez"))
        #expect(!ObjectPath.root.isDescendant(of: .root))
        let other: ObjectPath = "/org/bluezz"
        #expect(!other.isInNamespace("/org/bluez"))
    }

    @Test func signaturesAreValidated() throws {
        #expect(try Signature(String("a{oa{sa{sv}}}")).types.count == 1)
        #expect(try Signature(String("ya(ii)a{sv}h")).types.count == 4)
        for bad in [
            "a", "(", "()", "a{vs}", "a{s}", "a{sss}", "{sv}", "z", String(repeating: "a", count: 33) + "y",
            String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33),
            String(repeating: "y", count: 256),
        ] {
            let error = #expect(throws: DBusError.self) { try Signature(bad) }
            #expect(error?.code == .invalidSignature)
        }
    }

    @Test func emptyContainersKeepTheirSignatures() {
        #expect(Value.propertyMap([:]).type.description == "a{sv}")
        #expect(Value.objectPaths([]).type.description == "ao")
        #expect(Value.bytes([]).type.description == "ay")
        #expect(Value.array(.structure([.string, .variant]), []).type.description == "a(sv)")
    }

    @Test func decodingSaysWhatWasWrong() throws {
        let props = try Value.propertyMap(["RSSI": .int16(-60), "Name": .string("HRM")]).propertyMap()
        #expect(try props.decode("RSSI", as: Int16.self) == -60)
        #expect(try props.decode("TxPower", as: Int16.self) == nil)
        let error = #expect(throws: DBusError.self) { try props.decode("Name", as: Int16.self) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message.contains("Name") == true)
        #expect(error?.message.contains("'n'") == true)
        let missing = #expect(throws: DBusError.self) { try props.require("Address", as: String.self) }
        #expect(missing?.message.contains("Address") == true)
        let notMap = #expect(throws: DBusError.self) { try Value.string("x").managedObjects() }
        #expect(notMap?.message.contains("a{oa{sa{sv}}}") == true)
        #expect(try [UInt8](dbusValue: .bytes([1, 2])) == [1, 2])
        #expect([UInt8]([1, 2]).dbusValue == .bytes([1, 2]))
        #expect(try [String: Int32](dbusValue: ["a": Int32(1)].dbusValue) == ["a": 1])
    }
}
