import DBus

/// What kind of bluetoothd object a `BlueZPath` names.
public protocol BlueZObjectKind: Sendable {}
/// `/org/bluez/hci0`.
public enum AdapterObject: BlueZObjectKind {}
/// `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
public enum DeviceObject: BlueZObjectKind {}
/// A GATT service, characteristic or descriptor: `/org/bluez/hci0/dev_.../service0015/char0016`.
public enum AttributeObject: BlueZObjectKind {}

/// The path of an adapter, `/org/bluez/hci0`.
public typealias AdapterPath = BlueZPath<AdapterObject>
/// The path of a device, `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
public typealias DevicePath = BlueZPath<DeviceObject>
/// The path of a GATT service, characteristic or descriptor.
public typealias AttributePath = BlueZPath<AttributeObject>

/// The object path of a bluetoothd object of one kind: a typed handle, not a string. The client
/// makes them from what bluetoothd said; a string from elsewhere becomes one only through the
/// throwing initialiser, so a bad path is an error, never a crash.
public struct BlueZPath<Kind: BlueZObjectKind>: Hashable, Comparable, Sendable, CustomStringConvertible {
    let objectPath: ObjectPath

    init(_ objectPath: ObjectPath) {
        self.objectPath = objectPath
    }

    /// A path given as text (a caller's, a file's): it must be a valid D-Bus object path.
    public init(_ text: String) throws(BlueZError) {
        do throws(DBusError) {
            objectPath = try ObjectPath(text)
        } catch {
            throw BlueZError(.invalidPath, error.message)
        }
    }

    /// The object path as text.
    public var description: String { objectPath.rawValue }

    /// Object path order (`ObjectPath`'s), so that sorted lists are stable.
    public static func < (a: Self, b: Self) -> Bool { a.objectPath < b.objectPath }

    /// True when `self` lies below `ancestor` (a characteristic below its device).
    public func isDescendant<Other>(of ancestor: BlueZPath<Other>) -> Bool {
        objectPath.isDescendant(of: ancestor.objectPath)
    }
}
