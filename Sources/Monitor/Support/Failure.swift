package import BlueZ

/// How a BlueZ failure ends hrm: the exit status (sysexits where one fits) and a hint.
package enum Failure {
    package static func exitStatus(_ error: BlueZError) -> Int32 {
        switch error.code {
        // EX_UNAVAILABLE
        case .bluetoothdNotRunning, .noSystemBus, .noAdapter, .adapterPoweredOff, .adapterBlocked,
            .adapterNotFound,
            .disconnected, .peripheralUnsupported, .peripheralRefused:
            69
        // EX_NOPERM
        case .accessDenied: 77
        case .deviceNotFound, .timeout, .bluez, .dbus, .pairingFailed: 1
        // EX_USAGE: a path given as text that is not one.
        case .invalidPath: 64
        // A stop asked for (Ctrl-C while a call was on its way), not a failure.
        case .cancelled: 0
        }
    }

    /// What the user can do about `error`. Every command that can meet a powered-off adapter has
    /// `--power-on` (`AdapterOptions`), so suggesting it is true wherever it is suggested.
    package static func hint(_ error: BlueZError) -> String? {
        switch error.code {
        case .bluetoothdNotRunning: "start it with: sudo systemctl start bluetooth"
        case .noSystemBus:
            "start it with: sudo systemctl start dbus (in a container: dbus-daemon --system), or point DBUS_SYSTEM_BUS_ADDRESS at it"
        case .accessDenied:
            "add yourself to the 'bluetooth' group (sudo usermod -aG bluetooth $USER) and log in again"
        case .adapterPoweredOff: "run hrm with --power-on, or: bluetoothctl power on"
        case .adapterBlocked:
            "unblock it with: rfkill unblock bluetooth (or switch Bluetooth on in the desktop's settings)"
        case .noAdapter: "plug in a Bluetooth adapter, or check: rfkill list"
        case .deviceNotFound: "chest straps advertise only while worn, with moistened electrodes"
        case .peripheralUnsupported:
            "relay on another adapter with --relay-adapter, one whose controller can be an LE peripheral (btmgmt info says)"
        case .peripheralRefused:
            "another program may hold the adapter's advertising slots: stop it, or relay on another adapter with --relay-adapter"
        case .pairingFailed:
            "wear the strap (it pairs only while awake), make sure no phone or watch holds it, then: hrm pair DEVICE; if it was paired before, hrm unpair DEVICE first"
        default: nil
        }
    }
}
