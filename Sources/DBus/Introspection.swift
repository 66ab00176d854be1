// Introspection XML for `org.freedesktop.DBus.Introspectable.Introspect`.

private func escapeXML(_ text: String) -> String {
    var out = ""
    for ch in text {
        switch ch {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        default: out.append(ch)
        }
    }
    return out
}

private let standardInterfacesXML = """
     <interface name="org.freedesktop.DBus.Introspectable">
      <method name="Introspect">
       <arg name="xml_data" type="s" direction="out"/>
      </method>
     </interface>
     <interface name="org.freedesktop.DBus.Peer">
      <method name="Ping"/>
      <method name="GetMachineId">
       <arg name="machine_uuid" type="s" direction="out"/>
      </method>
     </interface>

    """

private let propertiesInterfaceXML = """
     <interface name="org.freedesktop.DBus.Properties">
      <method name="Get">
       <arg name="interface_name" type="s" direction="in"/>
       <arg name="property_name" type="s" direction="in"/>
       <arg name="value" type="v" direction="out"/>
      </method>
      <method name="GetAll">
       <arg name="interface_name" type="s" direction="in"/>
       <arg name="props" type="a{sv}" direction="out"/>
      </method>
      <method name="Set">
       <arg name="interface_name" type="s" direction="in"/>
       <arg name="property_name" type="s" direction="in"/>
       <arg name="value" type="v" direction="in"/>
      </method>
      <signal name="PropertiesChanged">
       <arg name="interface_name" type="s"/>
       <arg name="changed_properties" type="a{sv}"/>
       <arg name="invalidated_properties" type="as"/>
      </signal>
     </interface>

    """

private let objectManagerInterfaceXML = """
     <interface name="org.freedesktop.DBus.ObjectManager">
      <method name="GetManagedObjects">
       <arg name="objects" type="a{oa{sa{sv}}}" direction="out"/>
      </method>
      <signal name="InterfacesAdded">
       <arg name="object" type="o"/>
       <arg name="interfaces" type="a{sa{sv}}"/>
      </signal>
      <signal name="InterfacesRemoved">
       <arg name="object" type="o"/>
       <arg name="interfaces" type="as"/>
      </signal>
     </interface>

    """

private func args(_ signature: Signature, _ names: [String], direction: String?) -> String {
    var out = ""
    for (i, type) in signature.types.enumerated() {
        out += "   <arg"
        if i < names.count { out += " name=\"\(escapeXML(names[i]))\"" }
        out += " type=\"\(escapeXML(type.description))\""
        if let direction { out += " direction=\"\(direction)\"" }
        out += "/>\n"
    }
    return out
}

func introspect(_ tree: ObjectTree, _ path: ObjectPath) -> String {
    var xml = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>

        """
    xml += standardInterfacesXML
    if let object = tree.objects[path] {
        xml += propertiesInterfaceXML
        for name in object.order {
            guard let spec = object.interfaces[name]?.spec else { continue }
            xml += " <interface name=\"\(name.rawValue)\">\n"
            for method in spec.methods.values.sorted(by: { $0.name < $1.name }) {
                xml += "  <method name=\"\(method.name.rawValue)\">\n"
                xml += args(method.input ?? .empty, method.inputNames, direction: "in")
                xml += args(method.output ?? .empty, method.outputNames, direction: "out")
                xml += "  </method>\n"
            }
            for signal in spec.signals {
                xml += "  <signal name=\"\(signal.name.rawValue)\">\n"
                xml += args(signal.signature, signal.argNames, direction: nil)
                xml += "  </signal>\n"
            }
            for property in spec.properties.values.sorted(by: { $0.name < $1.name }) {
                xml +=
                    "  <property name=\"\(property.name.rawValue)\" type=\"\(escapeXML(property.type.description))\" "
                xml += "access=\"\(property.access.rawValue)\""
                if property.changes == .emitsValue {
                    xml += "/>\n"
                } else {
                    xml += ">\n   <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" "
                    xml += "value=\"\(property.changes.rawValue)\"/>\n  </property>\n"
                }
            }
            xml += " </interface>\n"
        }
    }
    if tree.managers.contains(path) { xml += objectManagerInterfaceXML }
    for child in tree.children(of: path) { xml += " <node name=\"\(escapeXML(child))\"/>\n" }
    xml += "</node>\n"
    return xml
}
