public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

// The config file's settings go into the parsed options here, and only here: each option the
// command line left out takes the file's value. A group of options that only make sense
// together (the zones, the output format) comes whole from one place: any of them on the
// command line and the file's are left out. Flags the file can only turn on (`power-on = true`,
// `ha-discovery = false`): `--no-config` goes back to none.

extension WatchArguments {
    /// Reads the config file (`--config`, `--no-config`) and fills in what the command line left
    /// out. A file that cannot be used ends hrm (66, 78) before anything touches Bluetooth;
    /// --mqtt-… options with a broker from neither place end it with 64.
    @discardableResult
    public mutating func applyConfigFile(command: String) throws(ExitCode) -> Configuration {
        let file = try configFile.load(command: command)
        let needsBroker = outputs.mqtt.detailsGiven
        fill(from: file)
        if needsBroker, outputs.mqtt.mqtt == nil {
            StandardOutput.diagnostic(
                "hrm \(command): the --mqtt-… and --ha-… options need --mqtt URL (or url in the config file's [mqtt])"
            )
            throw ExitCode(64)
        }
        return file
    }

    mutating func fill(from file: Configuration) {
        if devices.isEmpty, !all, let wanted = file.devices { devices = wanted }
        output.fill(from: file)
        bluetooth.fill(from: file)
        search.fill(from: file)
        hrv.fill(from: file)
        zones.fill(from: file)
        outputs.fill(from: file)
    }
}

extension OutputOptions {
    mutating func fill(from file: Configuration) {
        if !formatGiven { format = file.format }
        color = color ?? file.color
    }
}

extension AdapterOptions {
    mutating func fill(from file: Configuration) {
        adapter = adapter ?? file.adapter
        powerOn = powerOn || file.powerOn == true
    }
}

extension SearchOptions {
    mutating func fill(from file: Configuration) {
        scanTimeout = scanTimeout ?? file.scanTimeout
    }
}

extension HRVOptions {
    mutating func fill(from file: Configuration) {
        hrvEvery = hrvEvery ?? file.hrv.every
        hrvWindow = hrvWindow ?? file.hrv.window
    }
}

extension ZoneOptions {
    mutating func fill(from file: Configuration) {
        guard maxHr == nil, restHr == nil, zones == nil else { return }
        maxHr = file.maxHR
        restHr = file.restHR
        zones = file.zones
    }
}

extension MQTTArguments {
    mutating func fill(from file: Configuration) {
        mqtt = mqtt ?? file.mqtt.url
        mqttID = mqttID ?? file.mqtt.id
        mqttPrefix = mqttPrefix ?? file.mqtt.prefix
        mqttCafile = mqttCafile ?? file.mqtt.cafile
        noHaDiscovery = noHaDiscovery || file.mqtt.haDiscovery == false
        haPrefix = haPrefix ?? file.mqtt.haPrefix
    }
}

extension ServeArguments {
    public mutating func fill(from file: Configuration) {
        listen = listen ?? file.serve.listen
        if allowHost.isEmpty { allowHost = file.serve.allowHost ?? [] }
    }
}

extension ScanCommand {
    mutating func applyConfigFile() throws(ExitCode) {
        let file = try configFile.load(command: "scan")
        output.fill(from: file)
        bluetooth.fill(from: file)
    }
}

extension ResetEnergyCommand {
    mutating func applyConfigFile() throws(ExitCode) {
        let file = try configFile.load(command: "reset-energy")
        bluetooth.fill(from: file)
        search.fill(from: file)
    }
}

extension PairCommand {
    mutating func applyConfigFile() throws(ExitCode) {
        let file = try configFile.load(command: "pair")
        bluetooth.fill(from: file)
        search.fill(from: file)
    }
}

extension UnpairCommand {
    mutating func applyConfigFile() throws(ExitCode) {
        let file = try configFile.load(command: "unpair")
        bluetooth.fill(from: file)
    }
}

extension TeamCommand {
    mutating func applyConfigFile() throws(ExitCode) {
        let file = try configFile.load(command: "team")
        url = url ?? file.mqtt.url
        mqttPrefix = mqttPrefix ?? file.mqtt.prefix
        mqttCafile = mqttCafile ?? file.mqtt.cafile
    }
}
