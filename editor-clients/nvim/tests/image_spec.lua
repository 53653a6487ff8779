-- :Agent -i {file} attaches an image: the server reads it and the model sees it.
local h = require('harness')

h.main(function()
  h.setup({})
  vim.cmd.edit('app.py')
  local result = h.run('-i shot.png what is in the picture?')
  return { status = result.status }
end)
