// Polls /status and renders it; no framework, so the page works from any static file server.
(function () {
  "use strict";

  var POLL_MILLIS = 1000;
  var REASONS = {
    "read": "provably read-only statement",
    "stale-read": "STALE_READ: replica even after a write",
    "write": "not provably read-only",
    "escalated": "unit of work already wrote",
    "strategy": "strategy PRIMARY (mutation, @RoutingStrategy, event stream)",
    "forced": "query hint asked for the primary",
    "verify": "lost-update check of a replica read",
    "transaction": "transaction pinned to the primary",
    "raw-jdbc": "raw JDBC, SQL unknown up front",
    "replica-down": "no replica reachable",
    "lag-bound": "replicas too far behind",
    "not-in-recovery": "replica is not a standby",
    "lsn-fallback": "no replica replayed the actor's write in time",
    "lsn-wait": "waited for a replica to replay the actor's write",
    "pending-write": "actor has a write in flight (Redis marker)"
  };

  function el(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (key) { node.setAttribute(key, attributes[key]); });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function bytes(value) {
    if (value === null || value === undefined) { return "unknown"; }
    if (value < 1024) { return value + " B"; }
    if (value < 1024 * 1024) { return (value / 1024).toFixed(1) + " kB"; }
    return (value / 1024 / 1024).toFixed(1) + " MB";
  }

  function lagCell(node) {
    if (node.primary) { return el("td", { "class": "number lag" }, ["\u2014"]); }
    if (node.lagBytes === null) { return el("td", { "class": "number lag unknown", "data-lag-bytes": "" }, ["unknown"]); }
    var seconds = node.lagSeconds === null ? "?" : node.lagSeconds.toFixed(1);
    var behind = node.lagBytes > 0;
    return el("td", { "class": "number lag" + (behind ? " behind" : ""), "data-lag-bytes": String(node.lagBytes),
        "data-lag-seconds": node.lagSeconds === null ? "" : String(node.lagSeconds) },
      [behind ? bytes(node.lagBytes) + " \u00b7 " + seconds + " s" : "caught up (0 B \u00b7 0 s)"]);
  }

  function renderNodes(nodes) {
    var totalReads = nodes.reduce(function (sum, node) { return sum + node.reads; }, 0);
    var body = document.querySelector("#nodes tbody");
    body.replaceChildren.apply(body, nodes.map(function (node) {
      var share = totalReads === 0 ? 0 : Math.round(100 * node.reads / totalReads);
      var state = node.primary ? el("span", { "class": "badge primary" }, ["primary"])
        : el("span", { "class": "badge " + (node.up ? "up" : "down") }, [node.up ? "up" : "down"]);
      return el("tr", { "data-node": node.name, "data-primary": String(node.primary) }, [
        el("td", { "class": "name" }, [node.name, el("span", { "class": "role" }, [node.primary ? "writes and forced reads" : "hot standby"])]),
        el("td", {}, [state]),
        el("td", { "class": "number big reads", "data-value": String(node.reads) }, [String(node.reads)]),
        el("td", { "class": "number big writes", "data-value": String(node.writes) }, [node.primary ? String(node.writes) : "\u2014"]),
        lagCell(node),
        el("td", {}, [el("div", { "class": "bar", "title": share + "% of reads" }, [el("span", { "style": "width:" + share + "%" })])])
      ]);
    }));
  }

  function renderDecisions(decisions) {
    var list = document.getElementById("decisions");
    if (decisions.length === 0) {
      list.replaceChildren(el("li", {}, [el("span", { "class": "empty" }, ["No statements routed yet. Try the curl commands below."])]));
      return;
    }
    list.replaceChildren.apply(list, decisions.slice(0, 25).map(function (decision) {
      var time = new Date(decision.at).toLocaleTimeString([], { hour12: false }) + "." + String(new Date(decision.at).getMilliseconds()).padStart(3, "0");
      var kind = decision.node === "primary" ? "primary" : "replica";
      return el("li", { "data-reason": decision.reason }, [
        el("span", { "class": "time" }, [time]),
        el("span", { "class": "node " + kind }, [decision.node]),
        el("span", { "class": "reason" }, [el("code", {}, [decision.reason]), " " + (REASONS[decision.reason] || "")])
      ]);
    }));
  }

  function poll() {
    fetch("status", { cache: "no-store" })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (status) {
        var state = document.getElementById("state");
        state.className = "state";
        state.textContent = status.routing
          ? "Routing is on: " + (status.nodes.length - 1) + " replicas. Updated " + new Date().toLocaleTimeString([], { hour12: false })
            + (status.workerRedeliveries > 0 ? " \u00b7 worker redeliveries: " + status.workerRedeliveries : "")
          : "Routing is off (no replicas configured): everything runs on the primary.";
        renderNodes(status.nodes);
        renderDecisions(status.decisions);
      })
      .catch(function (error) {
        var state = document.getElementById("state");
        state.className = "state error";
        state.textContent = "Cannot read /status: " + error.message;
      });
  }

  document.querySelectorAll(".origin").forEach(function (span) { span.textContent = window.location.origin; });
  poll();
  setInterval(poll, POLL_MILLIS);
}());
