package import MQTT
package import Monitor

extension EventErrorCode {
    /// The MQTT broker refused, was not reachable, or failed.
    package init(_ code: MQTTError.Code) { self.init(rawValue: code.rawValue) }
}
