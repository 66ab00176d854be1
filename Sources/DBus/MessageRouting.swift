internal import CDBus
internal import CDBusShims

// Routing of incoming messages (loop thread, from the libdbus filter installed by `run`): replies
// to the calls waiting for them, signals to the signal streams, method calls to exported objects.

extension Core {
    /// What the filter does with each message libdbus dispatches.
    func handle(_ message: OpaquePointer) -> DBusHandlerResult {
        switch Int32(dbus_message_get_type(message)) {
        case Int32(CDBUS_MESSAGE_TYPE_METHOD_RETURN), Int32(CDBUS_MESSAGE_TYPE_ERROR):
            completeCall(reply: message)
            return DBUS_HANDLER_RESULT_HANDLED
        case Int32(CDBUS_MESSAGE_TYPE_SIGNAL):
            if dbus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
                shutdown(DBusError(.disconnected, "the bus closed the connection"))
                return DBUS_HANDLER_RESULT_HANDLED
            }
            dispatchSignal(message)
            return DBUS_HANDLER_RESULT_HANDLED
        case Int32(CDBUS_MESSAGE_TYPE_METHOD_CALL):
            dispatchMethodCall(message)
            return DBUS_HANDLER_RESULT_HANDLED
        default:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }
}
