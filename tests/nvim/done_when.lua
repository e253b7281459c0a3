-- Neovim, headless, with `chartseq lsp` as its language server through the README's
-- configuration: open a template, misspell a group, save, see CS101 at that line, accept the
-- quick fix, see the finding go, hover the group, jump to its definition.
--
-- Run by tests/it/lsp.rs: nvim --headless --clean -n -c "luafile tests/nvim/done_when.lua",
-- with CHARTSEQ_INIT (tests/nvim/init.lua, the README's configuration; `chartseq` on PATH),
-- CHARTSEQ_CHART (a chart copy) and CHARTSEQ_RESULT (where the outcome is written:
-- "ok <ms from the save to CS101>" or the failure).

local chart = os.getenv("CHARTSEQ_CHART")
local result = os.getenv("CHARTSEQ_RESULT")
local HANG = 60000

local function finish(text, code)
  local f = io.open(result, "w")
  f:write(text)
  f:close()
  vim.cmd(code == 0 and "qall!" or "cquit " .. code)
end

local function check(ok, what)
  if not ok then
    error(what, 2)
  end
end

local function codes(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    out[#out + 1] = d.code
  end
  return table.concat(out, ",")
end

local function find(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.code == code then
      return d
    end
  end
end

local function run()
  -- The README's configuration, as a user's init.lua holds it.
  dofile(os.getenv("CHARTSEQ_INIT"))
  -- Which files the server has published diagnostics for (an empty list counts: the first
  -- render is over).
  local published = {}
  local show = vim.lsp.handlers["textDocument/publishDiagnostics"]
  vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, res, ctx, config)
    if res and res.uri then
      published[res.uri] = true
    end
    return show(err, res, ctx, config)
  end
  vim.cmd("edit " .. chart .. "/templates/app.yaml")
  local bufnr = vim.api.nvim_get_current_buf()
  check(vim.bo[bufnr].filetype == "yaml", "filetype " .. vim.bo[bufnr].filetype)
  -- The client shows among the buffer's clients once the server has initialized.
  check(vim.wait(HANG, function()
    return next(vim.lsp.buf_get_clients(bufnr)) ~= nil
  end, 20), "the client did not start")
  local id = next(vim.lsp.buf_get_clients(bufnr))
  check(vim.wait(HANG, function()
    local c = vim.lsp.get_client_by_id(id)
    return c ~= nil and c.initialized
  end, 20), "the server did not initialize")
  -- The first render's findings for the template.
  check(vim.wait(HANG, function()
    return published[vim.uri_from_bufnr(bufnr)] ~= nil
  end, 20), "no diagnostics after opening: " .. codes(bufnr))

  -- Misspell the group and save.
  local line = vim.api.nvim_buf_get_lines(bufnr, 6, 7, true)[1]
  check(line:find('"database"', 1, true), "line 7 is not the depends-on line: " .. line)
  vim.api.nvim_buf_set_lines(bufnr, 6, 7, true, { (line:gsub('"database"', '"databse"')) })
  local saved = vim.loop.hrtime()
  vim.cmd("write")
  check(vim.wait(HANG, function()
    return find(bufnr, "CS101") ~= nil
  end, 5), "no CS101 after the save: " .. codes(bufnr))
  local elapsed = math.floor((vim.loop.hrtime() - saved) / 1e6)
  local d = find(bufnr, "CS101")
  check(d.lnum == 6, "CS101 on line " .. d.lnum)

  -- The quick fix.
  -- As `vim.lsp.buf.code_action()` asks (Neovim 0.7): the line's diagnostics.
  local params = vim.lsp.util.make_range_params()
  params.range = { start = { line = 6, character = 0 }, ["end"] = { line = 6, character = 0 } }
  params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, 6) }
  local answers = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, HANG)
  local action = answers and answers[id] and answers[id].result and answers[id].result[1]
  check(action ~= nil, "no code action")
  check(action.title == "Replace `databse` with `database`", "code action: " .. tostring(action.title))
  vim.lsp.util.apply_workspace_edit(action.edit, "utf-16")
  local fixed = vim.api.nvim_buf_get_lines(bufnr, 6, 7, true)[1]
  check(fixed == line, "the fixed line is " .. fixed)
  vim.cmd("write")
  check(vim.wait(HANG, function()
    return find(bufnr, "CS101") == nil
  end, 5), "CS101 is still shown after the fix: " .. codes(bufnr))

  -- Hover on the group.
  local at = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = 6, character = 45 } }
  local hover = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", at, HANG)
  local text = hover and hover[id] and hover[id].result and hover[id].result.contents.value or ""
  check(text:find("batch 1", 1, true), "hover: " .. text)
  check(text:find("waited for by: `app`, `migrate`", 1, true), "hover: " .. text)

  -- Go to definition.
  local definition = vim.lsp.buf_request_sync(bufnr, "textDocument/definition", at, HANG)
  local location = definition and definition[id] and definition[id].result and definition[id].result[1]
  check(location ~= nil, "no definition")
  vim.lsp.util.jump_to_location(location, "utf-16")
  local name = vim.api.nvim_buf_get_name(0)
  check(name:sub(-#"templates/database.yaml") == "templates/database.yaml", "jumped to " .. name)
  local cursor = vim.api.nvim_win_get_cursor(0)
  check(cursor[1] == 6 and cursor[2] == 28, "cursor at " .. cursor[1] .. ":" .. cursor[2])
  return elapsed
end

local ok, value = pcall(run)
if ok then
  finish("ok " .. value, 0)
else
  finish("failed: " .. tostring(value), 1)
end
