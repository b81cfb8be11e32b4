// The console's form for calling a tool: one field per parameter of the tool's JSON Schema
// (its type, enum, required, description, default), kept in step with the JSON view beside
// it, which is what is sent. A parameter the form cannot show as a field (an object, a list,
// a choice of schemas) is a JSON field of its own.
"use strict";

(() => {
  /** The schema's type, leaving out "null" (an optional value). */
  function typeOf(schema) {
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
    if (Array.isArray(schema.enum) && schema.enum.length) return "enum";
    return type || "json";
  }

  /** A field for one parameter: its element and how to read and write its value. */
  function field(el, name, schema, required) {
    const id = `param-${name}`;
    const type = typeOf(schema);
    let input;
    let read;
    let write;
    if (type === "enum") {
      const options = schema.enum.map((value) => el("option", { value: JSON.stringify(value) }, String(value)));
      input = el("select", { id, name }, required ? [] : [el("option", { value: "" }, "(not given)")], options);
      read = () => (input.value === "" ? undefined : JSON.parse(input.value));
      write = (value) => { input.value = value === undefined ? "" : JSON.stringify(value); };
    } else if (type === "boolean") {
      input = el("select", { id, name },
        required ? [] : [el("option", { value: "" }, "(not given)")],
        el("option", { value: "true" }, "true"), el("option", { value: "false" }, "false"));
      read = () => (input.value === "" ? undefined : input.value === "true");
      write = (value) => { input.value = value === undefined ? "" : String(Boolean(value)); };
    } else if (type === "integer" || type === "number") {
      input = el("input", { id, name, type: "number", step: type === "integer" ? "1" : "any",
        min: schema.minimum, max: schema.maximum });
      read = () => (input.value === "" ? undefined : Number(input.value));
      write = (value) => { input.value = value === undefined ? "" : String(value); };
    } else if (type === "string") {
      input = el("input", { id, name, type: "text", minlength: schema.minLength, maxlength: schema.maxLength });
      read = () => (input.value === "" && !required ? undefined : input.value);
      write = (value) => { input.value = value === undefined ? "" : String(value); };
    } else {
      input = el("textarea", { id, name, rows: "2", spellcheck: "false", class: "json-field", placeholder: "JSON" });
      read = () => {
        if (input.value.trim() === "") return undefined;
        return JSON.parse(input.value);
      };
      write = (value) => { input.value = value === undefined ? "" : JSON.stringify(value); };
    }
    if (required) input.setAttribute("required", "");
    const label = el("label", { for: id }, name, required ? el("span", { class: "required", title: "required" }, " *") : null,
      el("span", { class: "type" }, ` ${type === "enum" ? "one of" : type}`));
    const help = schema.description ? el("small", { class: "help" }, schema.description) : null;
    const element = el("div", { class: "param", "data-param": name }, label, input, help);
    return { name, element, input, read, write };
  }

  /**
   * Builds the fields of `schema` into `container`, writing the arguments as JSON into
   * `json` (a textarea) whenever a field changes, and reading them back when `json` is
   * edited. Returns a function that says what is wrong with the fields, if anything.
   */
  function build(el, schema, container, json) {
    const properties = (schema && schema.properties) || {};
    const required = new Set((schema && schema.required) || []);
    // Required parameters first, each group in the schema's order.
    const names = Object.keys(properties);
    const ordered = [...names.filter((n) => required.has(n)), ...names.filter((n) => !required.has(n))];
    const fields = ordered.map((name) => field(el, name, properties[name] || {}, required.has(name)));
    container.replaceChildren(...fields.map((f) => f.element));
    if (!fields.length) container.append(el("p", { class: "quiet" }, "This tool takes no arguments."));
    let problem = "";
    const toJson = () => {
      const args = {};
      problem = "";
      for (const f of fields) {
        try {
          const value = f.read();
          if (value !== undefined) args[f.name] = value;
        } catch (error) {
          problem = `${f.name}: not JSON (${error.message})`;
        }
      }
      json.value = JSON.stringify(args, null, 2);
    };
    const fromJson = () => {
      let args;
      try {
        args = JSON.parse(json.value || "{}");
      } catch {
        return; // being typed: the fields wait for JSON that parses
      }
      for (const f of fields) f.write(args && typeof args === "object" ? args[f.name] : undefined);
    };
    for (const f of fields) {
      const property = properties[f.name] || {};
      if (property.default !== undefined) f.write(property.default);
      f.input.addEventListener("input", toJson);
      f.input.addEventListener("change", toJson);
    }
    json.oninput = fromJson;
    toJson();
    return () => problem;
  }

  window.toolgateCallForm = Object.freeze({ build });
})();
