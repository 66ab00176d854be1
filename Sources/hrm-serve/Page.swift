/// The live page, compiled into the binary: nothing to install beside it.
enum Page {
    /// `__OFFLINE_TEXT__` is replaced by `--offline-text` (HTML-escaped) when served.
    static let html = """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>hrm</title></head>
        <body style="background:transparent">
        <div id="bpm">--</div>
        <script>
        const offline = "__OFFLINE_TEXT__";
        const bpm = document.getElementById("bpm");
        let last = 0;
        const source = new EventSource("events");
        source.onmessage = (m) => {
          const e = JSON.parse(m.data);
          if (e.type === "measurement") { bpm.textContent = e.bpm; last = Date.now(); }
        };
        setInterval(() => { if (Date.now() - last > 3000) bpm.textContent = offline; }, 500);
        </script>
        </body></html>
        """
}
