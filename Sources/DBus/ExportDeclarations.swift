import Synchronization

// What a program declares to export: interfaces with their methods, properties and signals, and
// the incoming call a method handler receives.

/// An incoming method call, as an exported method's handler sees it.
public final class MethodCall: Sendable {
    /// The call as received.
    public let message: Message
    let raw: OwnedMessage
    private let actions = Mutex<[@Sendable () -> Void]>([])

    init(message: Message, raw: OwnedMessage) {
        self.message = message
        self.raw = raw
    }

    /// The caller's unique name.
    public var sender: BusName? { message.sender }
    /// The object called (`/` if the message had no path, which libdbus does not let through).
    public var path: ObjectPath { message.path ?? .root }
    /// The interface named by the call; nil when the caller named none.
    public var interface: InterfaceName? { message.interface }
    /// The method called.
    public var member: MemberName { message.member ?? MemberName(unchecked: "Unknown") }
    /// The arguments, undecoded.
    public var body: [Value] { message.body }

    /// The arguments decoded as the given types (throws `.typeMismatch`, which becomes InvalidArgs).
    public func decode<each T: DBusValueConvertible>(_ types: repeat (each T).Type) throws(DBusError) -> (
        repeat each T
    ) {
        do {
            return try message.decode(repeat each types)
        } catch {
            throw DBusError(.invalidArgs, error.message)
        }
    }

    /// Runs `action` right after the reply has been queued: whatever it sends goes out after the
    /// reply (the handler's own sends before returning go out before it).
    public func afterReply(_ action: @escaping @Sendable () -> Void) {
        actions.withLock { $0.append(action) }
    }

    func takeActions() -> [@Sendable () -> Void] {
        actions.withLock { list in
            defer { list = [] }
            return list
        }
    }
}

/// An exported method.
public struct Method: Sendable {
    /// Answers a call with the return values. It starts on the connection's loop thread and runs there
    /// until it first suspends; throwing a `DBusError` replies with it, any other error with Failed.
    public typealias Handler = @Sendable (MethodCall) async throws -> [Value]
    /// The method's name.
    public var name: MemberName
    /// nil accepts any arguments.
    public var input: Signature?
    /// nil allows any return values.
    public var output: Signature?
    /// Names of the arguments, for introspection; may be empty.
    public var inputNames: [String]
    /// Names of the return values, for introspection; may be empty.
    public var outputNames: [String]
    /// What runs for each call.
    public var handler: Handler

    /// Calls whose signature is not `input` get InvalidArgs without reaching `handler`; the
    /// handler's return values must have the signature `output` (else the caller gets Failed).
    /// Throw a `DBusError(name:message:)` to reply with that error.
    public init(
        _ name: MemberName, input: Signature? = .empty, output: Signature? = .empty,
        inputNames: [String] = [], outputNames: [String] = [], handler: @escaping Handler
    ) {
        self.name = name
        self.input = input
        self.output = output
        self.inputNames = inputNames
        self.outputNames = outputNames
        self.handler = handler
    }
}

/// An exported property. Values are stored by the connection: set them with
/// `Connection.setProperties`; remote `Set` calls go through `setter` if there is one.
public struct Property: Sendable {
    /// Whether remote Get, Set or both are allowed (`read`, `write`, `readwrite` in introspection).
    public enum Access: String, Sendable { case read, write, readWrite = "readwrite" }
    /// The `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation.
    public enum Changes: String, Sendable {
        /// PropertiesChanged carries the new value.
        case emitsValue = "true"
        /// PropertiesChanged lists the name as invalidated.
        case invalidates
        /// Never changes.
        case constant = "const"
        /// Changes are not signalled.
        case none = "false"
    }
    /// Validates (and may transform) a value set by a remote `Set`; throw a `DBusError` to refuse.
    public typealias Setter = @Sendable (Value, MethodCall) async throws -> Value

    /// The property's name.
    public var name: MemberName
    /// The one complete type every value of the property has.
    public var type: DBusType
    /// What remote callers may do: Get on a `.write` property or Set on a `.read` one is refused.
    public var access: Access
    /// How changes are signalled, as the EmitsChangedSignal annotation declares.
    public var changes: Changes
    /// Checks a remote Set; nil accepts any value of the right type (where `access` allows Set at all).
    public var setter: Setter?

    /// A property of `type`; read-only and signalled with its value by default.
    public init(
        _ name: MemberName, type: DBusType, access: Access = .read, changes: Changes = .emitsValue,
        setter: Setter? = nil
    ) {
        self.name = name
        self.type = type
        self.access = access
        self.changes = changes
        self.setter = setter
    }
}

/// A signal an interface declares (for introspection).
public struct SignalSpec: Sendable {
    /// The signal's name.
    public var name: MemberName
    /// The types of its arguments.
    public var signature: Signature
    /// Names of the arguments, for introspection; may be empty.
    public var argNames: [String]
    /// A signal of `name` with arguments of `signature`.
    public init(_ name: MemberName, signature: Signature = .empty, argNames: [String] = []) {
        self.name = name
        self.signature = signature
        self.argNames = argNames
    }
}

/// An interface to export: its methods, properties and signals.
public struct Interface: Sendable {
    /// `org.bluez.Device1`.
    public let name: InterfaceName
    /// The methods by name.
    public let methods: [MemberName: Method]
    /// The properties by name.
    public let properties: [String: Property]
    /// The signals, in the order given (introspection lists them so).
    public let signals: [SignalSpec]

    /// An interface of these members; of two with the same name, the later one is kept.
    public init(
        _ name: InterfaceName, methods: [Method] = [], properties: [Property] = [], signals: [SignalSpec] = []
    ) {
        self.name = name
        var m: [MemberName: Method] = [:]
        for method in methods { m[method.name] = method }
        self.methods = m
        var p: [String: Property] = [:]
        for property in properties { p[property.name.rawValue] = property }
        self.properties = p
        self.signals = signals
    }
}

/// An interface with its initial property values, for `Connection.export`.
public struct ExportedInterface: Sendable {
    /// The interface's declaration.
    public var interface: Interface
    /// Initial values by property name, each of its property's type (`export` throws otherwise).
    public var properties: [String: Value]
    /// `interface` with the initial `properties`.
    public init(_ interface: Interface, properties: [String: Value] = [:]) {
        self.interface = interface
        self.properties = properties
    }
}
