// The clinic's result components for the approval console: `get_pet_records` names
// `pet_card` (#[tool(ui = "pet_card")]). Built with toolgate.el, which adds text, never markup.
toolgate.component("pet_card", (pet) => {
  const { el } = toolgate;
  const notes = pet.notes.length
    ? el("ul", { class: "pet-notes" }, pet.notes.map((note) => el("li", {}, note)))
    : el("p", { class: "quiet" }, "No notes yet.");
  return el(
    "div",
    { class: "pet-card" },
    el("h3", {}, `${pet.name} `, el("span", { class: "quiet" }, `(${pet.species}, #${pet.id})`)),
    el("p", { class: "quiet" }, `Owner: ${pet.owner}`),
    notes,
  );
});
